"""QoS verdicts (SPECweb2005): pure functions of a run's per-page-type class counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PageVerdict:
    name: str
    count: int
    good_share: float
    good_or_tolerable_share: float
    valid: bool
    #: Pages whose own response failed its check (error status, content marker missing); each is
    #: also a FAIL, as SPECweb counts it.
    invalid: int = 0


@dataclass(frozen=True)
class Verdict:
    valid: bool
    pages: tuple[PageVerdict, ...]


def verdict(sessions: dict[str, Any], good_share: float = 0.95, good_or_tolerable_share: float = 0.99) -> Verdict:
    """Valid when every page type has at least `good_share` GOOD and `good_or_tolerable_share`
    GOOD + TOLERABLE pages; a page type with no measured page is not valid. A page that failed its
    check (or any request of it) is already a FAIL in the engine's counts. With arrival phases,
    every page type of every phase is judged on its own ("post in phase 2"): a load is valid when
    every phase survives it, as the thesis's load test asks."""
    phases = sessions.get("phases") or []
    if not phases:
        return Verdict(*_judge(sessions["pages"], good_share, good_or_tolerable_share))
    judged = [
        _judge({f"{name} in phase {k}": page for name, page in phase["pages"].items()}, good_share, good_or_tolerable_share)
        for k, phase in enumerate(phases, 1)
    ]
    return Verdict(all(valid for valid, _ in judged), tuple(page for _, pages in judged for page in pages))


def _judge(
    named_pages: dict[str, Any], good_share: float, good_or_tolerable_share: float
) -> tuple[bool, tuple[PageVerdict, ...]]:
    pages = []
    for name, page in sorted(named_pages.items()):
        count = page["count"]
        good = page["good"] / count if count else 0.0
        good_or_tolerable = (page["good"] + page["tolerable"]) / count if count else 0.0
        valid = count > 0 and good >= good_share and good_or_tolerable >= good_or_tolerable_share
        pages.append(PageVerdict(name, count, good, good_or_tolerable, valid, page.get("invalid", 0)))
    return all(p.valid for p in pages), tuple(pages)


def pages_of(result: dict[str, Any]) -> int:
    """The pages measured in a sessions result, every page type together (a page: its main
    request and its embedded resources)."""
    return sum(page["count"] for page in result["sessions"]["pages"].values())

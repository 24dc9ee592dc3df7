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


@dataclass(frozen=True)
class Verdict:
    valid: bool
    pages: tuple[PageVerdict, ...]


def verdict(sessions: dict[str, Any], good_share: float = 0.95, good_or_tolerable_share: float = 0.99) -> Verdict:
    """Valid when every page type has at least `good_share` GOOD and `good_or_tolerable_share`
    GOOD + TOLERABLE pages; a page type with no measured page is not valid."""
    pages = []
    for name, page in sorted(sessions["pages"].items()):
        count = page["count"]
        good = page["good"] / count if count else 0.0
        good_or_tolerable = (page["good"] + page["tolerable"]) / count if count else 0.0
        valid = count > 0 and good >= good_share and good_or_tolerable >= good_or_tolerable_share
        pages.append(PageVerdict(name, count, good, good_or_tolerable, valid))
    return Verdict(all(p.valid for p in pages), tuple(pages))

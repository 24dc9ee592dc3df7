"""QoS verdicts and the capacity search, as pure tables."""

from __future__ import annotations

import pytest

from gauntlet.analysis.capacity import search
from gauntlet.analysis.qos import verdict


def page(good: int, tolerable: int, fail: int) -> dict[str, int]:
    return {"count": good + tolerable + fail, "good": good, "tolerable": tolerable, "fail": fail}


@pytest.mark.parametrize(
    ("pages", "valid"),
    [
        ({"a": page(95, 4, 1), "b": page(100, 0, 0)}, True),
        ({"a": page(94, 6, 0)}, False),
        ({"a": page(95, 3, 2)}, False),
        ({"a": page(100, 0, 0), "b": page(0, 0, 0)}, False),
    ],
)
def test_specweb_validity(pages: dict, valid: bool) -> None:
    assert verdict({"pages": pages}).valid is valid


def test_thresholds_are_configurable() -> None:
    assert verdict({"pages": {"a": page(80, 20, 0)}}, good_share=0.8, good_or_tolerable_share=1.0).valid
    shares = verdict({"pages": {"a": page(80, 15, 5)}}).pages[0]
    assert (shares.good_share, shares.good_or_tolerable_share) == (0.8, 0.95)


@pytest.mark.parametrize(
    ("capacity", "start", "max_probes", "found", "first_invalid", "spent"),
    [
        (19, 4, 12, 19, 20, False),
        (19, 4, 3, 16, None, True),
        (0, 4, 10, 0, 1, False),
        (1000, 1, 20, 1000, 1001, False),
        (7, 8, 10, 7, 8, False),
    ],
)
def test_grow_then_bisect(capacity: int, start: int, max_probes: int, found: int, first_invalid: int | None, spent: bool) -> None:
    result = search(lambda users: users <= capacity, start, max_probes)
    assert (result.users, result.first_invalid, result.budget_spent) == (found, first_invalid, spent)
    assert len(result.probes) <= max_probes
    assert all(valid == (users <= capacity) for users, valid in result.probes)

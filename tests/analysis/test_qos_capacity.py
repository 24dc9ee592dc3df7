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


def test_with_arrival_phases_every_phase_is_judged_on_its_own() -> None:
    """The whole run would pass (200 good of 204 pages); phase 2 alone does not."""
    phases = [{"pages": {"home": page(100, 0, 0)}}, {"pages": {"home": page(0, 2, 2)}}, {"pages": {"home": page(100, 0, 0)}}]
    found = verdict({"pages": {"home": page(200, 2, 2)}, "phases": phases})
    assert not found.valid
    assert [(p.name, p.valid) for p in found.pages] == [
        ("home in phase 1", True), ("home in phase 2", False), ("home in phase 3", True),
    ]
    phases[1]["pages"]["home"] = page(50, 0, 0)
    assert verdict({"pages": {"home": page(250, 0, 0)}, "phases": phases}).valid


@pytest.mark.parametrize(
    ("capacity", "start", "max_probes", "found", "first_invalid", "spent", "probes"),
    [
        (19, 4, 12, 19, 20, False, 8),  # 4 8 16 32, then 24 20 18 19
        (19, 4, 3, 16, 32, True, 4),  # the growth to 32 goes past the budget; no bisection is left
        (19, 4, 5, 16, 24, True, 5),  # one bisection
        (0, 4, 10, 0, 1, False, 3),
        (1000, 1, 20, 1000, 1001, False, 20),
        (7, 8, 10, 7, 8, False, 4),
        (5000, 10, 10, 2000, None, False, 9),  # 10 .. 1280, then the ceiling: open above
    ],
)
def test_grow_until_invalid_then_bisect(
    capacity: int, start: int, max_probes: int, found: int, first_invalid: int | None, spent: bool, probes: int
) -> None:
    result = search(lambda users: users <= capacity, start, max_probes, ceiling=2000)
    assert (result.users, result.first_invalid, result.budget_spent) == (found, first_invalid, spent)
    assert len(result.probes) == probes
    assert result.ceiling_reached is (first_invalid is None)
    assert all(valid == (users <= capacity) for users, valid in result.probes)

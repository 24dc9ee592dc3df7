"""Capacity search: the most simultaneous sessions that stay QoS-valid, in a bounded number of
probes. Grow (doubling) until a probe fails, then bisect between the last valid and the first
invalid level; the answer is that bracket."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gauntlet.model.loadfile import LoadFile


@dataclass
class Capacity:
    """`users` is the largest valid level found (0: none); the true capacity lies in
    [users, first_invalid) — open above when no level failed."""

    users: int = 0
    first_invalid: int | None = None
    probes: list[tuple[int, bool]] = field(default_factory=list)
    budget_spent: bool = False


def highest_level(start: int, max_probes: int) -> int:
    """The highest level a search can probe: every probe valid, doubling from `start`."""
    return max(start, 1) * 2 ** (max_probes - 1)


def most_connections(load: LoadFile, start: int, max_probes: int) -> int:
    """The most connections a search's probes can open at once: those of its highest level."""
    return load.at_level(highest_level(start, max_probes)).to_plan("").all_connections()


def search(probe: Callable[[int], bool], start: int, max_probes: int) -> Capacity:
    found = Capacity()

    def try_level(users: int) -> bool:
        valid = probe(users)
        found.probes.append((users, valid))
        if valid:
            found.users = max(found.users, users)
        else:
            found.first_invalid = users if found.first_invalid is None else min(found.first_invalid, users)
        return valid

    level = max(start, 1)
    while found.first_invalid is None and len(found.probes) < max_probes:
        if try_level(level):
            level *= 2
    while (
        found.first_invalid is not None
        and found.first_invalid - found.users > 1
        and len(found.probes) < max_probes
    ):
        try_level((found.users + found.first_invalid) // 2)
    found.budget_spent = found.first_invalid is None or found.first_invalid - found.users > 1
    return found

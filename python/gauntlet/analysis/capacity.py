"""Capacity search: the most simultaneous sessions that stay QoS-valid. Grow (doubling) until a
probe fails, however many probes that takes (up to a ceiling), then bisect between the last valid
and the first invalid level within the probe budget; the answer is that bracket."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gauntlet.model.loadfile import LoadFile


@dataclass
class Capacity:
    """`users` is the largest valid level found (0: none); the true capacity lies in
    [users, first_invalid) — open above when no level up to the ceiling failed."""

    users: int = 0
    first_invalid: int | None = None
    probes: list[tuple[int, bool]] = field(default_factory=list)
    #: The bracket is wider than one level: the probe budget ran out while bisecting.
    budget_spent: bool = False
    #: Every level up to the ceiling was valid: there is no upper bound.
    ceiling_reached: bool = False


def ceiling(load: LoadFile) -> int:
    """The highest level a search probes: the load file's `max_users`."""
    return load.max_users


def most_connections(load: LoadFile) -> int:
    """The most connections a search's probes can open at once: those of its ceiling."""
    return load.at_level(ceiling(load)).to_plan("").all_connections()


def search(probe: Callable[[int], bool], start: int, max_probes: int, ceiling: int) -> Capacity:
    """Probe `start`, 2 x start, ... until a level fails (the last one tried is `ceiling`), then
    bisect while fewer than `max_probes` probes were made: the growth is never cut short, so a
    search always ends with a first invalid level unless the ceiling held."""
    found = Capacity()

    def try_level(users: int) -> bool:
        valid = probe(users)
        found.probes.append((users, valid))
        if valid:
            found.users = max(found.users, users)
        else:
            found.first_invalid = users if found.first_invalid is None else min(found.first_invalid, users)
        return valid

    level = min(max(start, 1), ceiling)
    while try_level(level) and level < ceiling:
        level = min(level * 2, ceiling)
    while (
        found.first_invalid is not None
        and found.first_invalid - found.users > 1
        and len(found.probes) < max_probes
    ):
        try_level((found.users + found.first_invalid) // 2)
    found.ceiling_reached = found.first_invalid is None
    found.budget_spent = found.first_invalid is not None and found.first_invalid - found.users > 1
    return found

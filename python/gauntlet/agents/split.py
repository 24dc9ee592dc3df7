"""Divide one plan into N slices, one per agent, whose totals are exactly the plan's.

Pure: no Dask, no clock, no socket. Connections are spread as evenly as possible (with a fixed
number of session users, in proportion to the users, so that every agent keeps two connections per
user); requests, rates and arrival rates follow each slice's connections. Integer shares come from
cumulative rounding, so they add up exactly; a rate's last share is what the others leave, so the
shares add up to the rate asked for.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

from gauntlet.engine import Plan
from gauntlet.errors import GauntletError

#: Mixes the agent's index into a sessions seed, so that agents draw different users.
SEED_STEP = 0x9E3779B97F4A7C15
SEED_MASK = (1 << 64) - 1


def split_count(total: int, weights: Sequence[int]) -> list[int]:
    """`total` in shares proportional to `weights`, each within 1 of its exact share, summing to `total`."""
    weight_sum = sum(weights)
    shares, cumulative = [], 0
    for weight in weights:
        before = total * cumulative // weight_sum
        cumulative += weight
        shares.append(total * cumulative // weight_sum - before)
    return shares


def split_even(total: int, parts: int) -> list[int]:
    """`total` in `parts` shares as equal as possible, the larger ones first."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def split_rate(rate_per_s: float, weights: Sequence[int]) -> list[float]:
    """A rate in shares proportional to `weights`; the last share is the remainder."""
    weight_sum = sum(weights)
    shares = [rate_per_s * weight / weight_sum for weight in weights[:-1]]
    return [*shares, rate_per_s - math.fsum(shares)]


def _too_few(what: str, total: int, agents: int, fix: str) -> GauntletError:
    return GauntletError(f"the plan has {total} {what} for {agents} agents, fewer than one each", fix)


def connection_shares(plan: Plan, agents: int) -> list[int]:
    connections = int(plan["connections"])
    if connections < agents:
        raise _too_few("connections", connections, agents, f"Give -c {agents} or more, or use fewer agents")
    sessions = plan.get("sessions")
    users = sessions.get("users") if sessions else None
    if users is None:
        return split_even(connections, agents)
    if users < agents:
        raise _too_few("session users", users, agents, f"Give {agents} users or more, or use fewer agents")
    return split_count(connections, split_even(users, agents))


def split_plan(plan: Plan, agents: int) -> list[Plan]:
    """N slices of `plan`; each keeps every other field (duration, warm-up, timeout, threads as a
    per-agent count lowered to the slice's connections) as it is."""
    if agents < 1:
        raise GauntletError(f"{agents} agents cannot run a plan", "Give --agents 1 or more")
    connections = connection_shares(plan, agents)
    requests = plan.get("requests")
    if requests is not None and requests < agents:
        raise _too_few("requests", requests, agents, f"Give -n {agents} or more, or use fewer agents")
    request_shares = split_count(requests, connections) if requests is not None else [None] * agents
    rate = plan.get("rate_per_s")
    rate_shares = split_rate(rate, connections) if rate is not None else [None] * agents
    slices = []
    for index in range(agents):
        part = copy.deepcopy(plan)
        part["connections"] = connections[index]
        part["threads"] = min(int(plan.get("threads", 1)), connections[index])
        part["requests"] = request_shares[index]
        part["rate_per_s"] = rate_shares[index]
        slices.append(part)
    if plan.get("sessions"):
        _split_sessions(plan["sessions"], [part["sessions"] for part in slices], connections)
    return slices


def _split_sessions(sessions: dict[str, Any], parts: list[dict[str, Any]], connections: list[int]) -> None:
    if sessions.get("users") is not None:
        for part, users in zip(parts, split_even(sessions["users"], len(parts)), strict=True):
            part["users"] = users
    for phase_index, phase in enumerate(sessions.get("phases") or []):
        for part, users_per_s in zip(parts, split_rate(phase["users_per_s"], connections), strict=True):
            part["phases"][phase_index]["users_per_s"] = users_per_s
    seed = int(sessions.get("seed", 1))
    for index, part in enumerate(parts):
        part["seed"] = (seed + index * SEED_STEP) & SEED_MASK

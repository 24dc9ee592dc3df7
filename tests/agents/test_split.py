"""The split of a plan over agents, through the engine (gauntlet.engine.split_plan): exact totals,
in tables (pure, no cluster). The share arithmetic itself is tested in engine/src/split.rs."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError

SPLIT_FIELDS = ("connections", "requests", "threads")


def plan(**fields: Any) -> dict[str, Any]:
    return {"url": "http://127.0.0.1:1/", "connections": 10, "threads": 2, "requests": None, "rate_per_s": None,
            "duration_us": 1_000_000, "warmup_us": 0, "sessions": None, **fields}


def sessions(**fields: Any) -> dict[str, Any]:
    return {"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 1}, "pages": []}],
            "users": None, "phases": None, "seed": 7, **fields}


@pytest.mark.parametrize(
    ("fields", "agents", "connections", "requests", "threads"),
    [
        ({"connections": 10, "requests": 1000}, 3, [4, 3, 3], [400, 300, 300], [2, 2, 2]),
        ({"connections": 3, "requests": 10, "threads": 4}, 3, [1, 1, 1], [3, 3, 4], [1, 1, 1]),
        ({"connections": 5, "requests": 7}, 2, [3, 2], [4, 3], [2, 2]),
        ({"connections": 8}, 1, [8], [None], [2]),
    ],
)
def test_connections_spread_evenly_and_requests_follow_them(
    fields: dict[str, Any], agents: int, connections: list[int], requests: list[int | None], threads: list[int]
) -> None:
    whole = plan(**fields)
    slices = engine.split_plan(whole, agents)
    assert [s["connections"] for s in slices] == connections
    assert [s["requests"] for s in slices] == requests
    assert [s["threads"] for s in slices] == threads
    for part in slices:
        assert {k: part[k] for k in whole if k not in SPLIT_FIELDS} == {k: v for k, v in whole.items() if k not in SPLIT_FIELDS}
        assert (part["timeout_us"], part["method"]) == (15_000_000, "GET"), "the engine fills in its defaults"


def test_a_rate_splits_with_the_connections() -> None:
    slices = engine.split_plan(plan(connections=10, rate_per_s=3000.0), 3)
    assert [s["rate_per_s"] for s in slices] == pytest.approx([1200.0, 900.0, 900.0])
    assert math.fsum(s["rate_per_s"] for s in slices) == 3000.0
    odd = engine.split_plan(plan(connections=20, rate_per_s=12_345.678), 7)
    assert math.fsum(s["rate_per_s"] for s in odd) == 12_345.678


def test_session_users_keep_two_connections_each() -> None:
    """3 users on 6 connections over 2 agents: users 2 + 1, so connections 4 + 2 (an even 3 + 3
    would leave the first agent one connection short)."""
    slices = engine.split_plan(plan(connections=6, sessions=sessions(users=3)), 2)
    assert [(s["sessions"]["users"], s["connections"]) for s in slices] == [(2, 4), (1, 2)]
    for users, connections in [(10, 20), (7, 14), (5, 31)]:
        parts = engine.split_plan(plan(connections=connections, sessions=sessions(users=users)), 3)
        assert sum(p["sessions"]["users"] for p in parts) == users
        assert sum(p["connections"] for p in parts) == connections
        assert all(2 * p["sessions"]["users"] <= p["connections"] for p in parts)


def test_arrival_rates_split_per_phase_and_seeds_differ() -> None:
    phases = [{"users_per_s": 100.0, "duration_us": 1}, {"users_per_s": 450.0, "duration_us": 1}]
    slices = engine.split_plan(plan(connections=9, sessions=sessions(phases=phases)), 3)
    for phase in range(2):
        assert math.fsum(s["sessions"]["phases"][phase]["users_per_s"] for s in slices) == phases[phase]["users_per_s"]
    seeds = [s["sessions"]["seed"] for s in slices]
    assert seeds[0] == 7 and len(set(seeds)) == 3 and all(0 <= seed < 2**64 for seed in seeds)
    assert seeds[1] == (7 + 0x9E3779B97F4A7C15) % 2**64


@pytest.mark.parametrize(
    ("fields", "agents", "message"),
    [
        ({"connections": 2}, 3, "2 connections for 3 agents"),
        ({"connections": 10, "requests": 2}, 3, "2 requests for 3 agents"),
        ({"connections": 10, "sessions": sessions(users=2)}, 3, "2 session users for 3 agents"),
        ({}, 0, "0 agents"),
        ({"bogus": 1}, 2, "the plan is not valid"),
    ],
)
def test_too_little_to_share_is_refused(fields: dict[str, Any], agents: int, message: str) -> None:
    with pytest.raises(GauntletError, match=message) as refused:
        engine.split_plan(plan(**fields), agents)
    assert "\n" not in str(refused.value)

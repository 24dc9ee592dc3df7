"""Distributed runs on a local Dask cluster of worker processes (127.0.0.1 only) against the
built-in server: exact totals on the server's own count, an independent histogram merge, the total
rate held over three agents, a worker killed mid-run, refusals before any load."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest

from gauntlet import engine
from gauntlet.agents.runner import AgentRunner
from gauntlet.errors import GauntletError
from gauntlet.lab.measure import DEFAULT_SETTINGS, measure_run
from gauntlet.plan import Plan
from gauntlet.servers.base import ServerInstance
from tests.agents.merging import VALIDATOR, merged_independently, recorded
from tests.conftest import Start, missing_here
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cgroup_readings import cgroup_readings, cpu_at


def plan(url: str, **fields: Any) -> engine.Plan:
    return {"url": url, "connections": 4, "threads": 1, "warmup_us": 0, "timeout_us": 5_000_000, **fields}


def test_two_agents_send_exactly_the_requests_asked_for(agents3: AgentRunner, builtin_server: ServerInstance) -> None:
    runner = AgentRunner(agents3.client, 2)
    before = server_stats(builtin_server)["requests"]
    result = runner(plan(f"{builtin_server.url}webtest.html", connections=7, requests=20_001)).result
    VALIDATOR.validate(result)
    assert server_stats(builtin_server)["requests"] - before == 20_001
    assert result["requests"] == result["responses"] == result["status_codes"]["200"] == 20_001
    agents = result["agents"]
    assert [(a["slice"]["connections"], a["slice"]["requests"], a["requests"]) for a in agents] == [
        (4, 11_429, 11_429), (3, 8_572, 8_572)
    ]
    assert len({a["address"] for a in agents}) == 2 and {a["address"] for a in agents} <= set(runner.workers())
    assert recorded(result["histogram"]) == merged_independently([a["histogram"] for a in agents])
    assert recorded(result["service_histogram"]) == merged_independently([a["service_histogram"] for a in agents])
    assert abs(agents[0]["started_unix_ms"] - agents[1]["started_unix_ms"]) <= 20, "one agreed start"
    assert result["plan"]["start_at_unix_us"] // 1_000 <= min(a["started_unix_ms"] for a in agents) + 1


def test_three_agents_hold_the_total_rate(agents3: AgentRunner, builtin_server: ServerInstance) -> None:
    before = server_stats(builtin_server)["requests"]
    readings: list[engine.Progress] = []
    result = agents3(plan(f"{builtin_server.url}hello", connections=12, rate_per_s=1_500.0, duration_us=3_000_000),
                     readings.append).result
    VALIDATOR.validate(result)
    assert result["schedule"]["achieved_rate_per_s"] == pytest.approx(1_500, rel=0.02)
    assert result["requests"] == pytest.approx(4_500, rel=0.02)
    assert server_stats(builtin_server)["requests"] - before == pytest.approx(4_500, rel=0.02)
    for agent in result["agents"]:
        assert agent["slice"]["rate_per_s"] == pytest.approx(500.0)
        assert agent["achieved_rate_per_s"] == pytest.approx(500, rel=0.03)
    assert [s["second"] for s in result["timeline"]] == [0, 1, 2]
    assert readings and readings[-1]["measuring"] and readings[-1]["requests"] > 2_000, "progress summed over agents (one agent sends 1,500 in all)"


def test_a_worker_killed_mid_run_leaves_a_partial_result(agents3: AgentRunner, builtin_server: ServerInstance) -> None:
    runner = AgentRunner(agents3.client, 2)
    doomed = runner.workers()[1]
    pid = agents3.client.run(os.getpid, workers=[doomed])[doomed]
    killed = threading.Event()

    def kill_after_a_second(progress: engine.Progress) -> None:
        if progress["elapsed_us"] >= 1_000_000 and not killed.is_set():
            os.kill(pid, signal.SIGKILL)
            killed.set()

    began = time.monotonic()
    result = runner(plan(builtin_server.url, connections=4, rate_per_s=400.0, duration_us=3_000_000),
                    kill_after_a_second).result
    assert killed.is_set() and time.monotonic() - began < 15
    VALIDATOR.validate(result)
    survivor, lost = result["agents"]
    assert result["partial"] is True
    assert (lost["address"], lost["state"], lost["requests"]) == (doomed, "lost", None)
    assert "worker left the cluster" in lost["reason"] and " s after the start)" in lost["reason"]
    assert survivor["state"] == "completed" and survivor["requests"] == pytest.approx(600, rel=0.05)
    assert result["requests"] == survivor["requests"]
    assert recorded(result["histogram"]) == recorded(survivor["histogram"])


def test_an_unreachable_target_is_refused_before_any_load(agents3: AgentRunner) -> None:
    with pytest.raises(GauntletError, match=r"agent tcp://127\.0\.0\.1:\d+ cannot run its slice: cannot reach 127\.0\.0\.1:1"):
        agents3(plan("http://127.0.0.1:1/", connections=3, requests=30))


def test_fewer_connections_than_agents_is_refused(agents3: AgentRunner) -> None:
    with pytest.raises(GauntletError, match="2 connections for 3 agents"):
        agents3(plan("http://127.0.0.1:1/", connections=2, requests=30))


def test_the_monitor_reads_the_server_over_the_agents_measured_interval(agents3: AgentRunner, server: Start) -> None:
    """The merged interval, on this machine's monotonic clock, bounds the server's figures: its
    cgroup read by this test over the same instants agrees, the warm-up left out."""
    instance = server("nginx", workers=2)
    if instance.cgroup is None:
        missing_here("no cgroup for the server on this machine: nothing independent to compare with", "CI runs as root")
    agent_plan = plan(f"{instance.url}webtest.html", warmup_us=1_500_000, duration_us=1_500_000)
    with cgroup_readings(instance.cgroup) as readings:
        result = measure_run(Plan(**agent_plan), instance, DEFAULT_SETTINGS, run_plan=AgentRunner(agents3.client, 2)).result
    from_s, to_s = result["measured_from_monotonic_us"] / 1e6, result["measured_to_monotonic_us"] / 1e6
    assert result["server"]["elapsed_s"] == pytest.approx(to_s - from_s) and to_s - from_s >= 1.5
    truth_s = cpu_at(readings, to_s) - cpu_at(readings, from_s)
    stored_s = result["server"]["cpu_user_s"] + result["server"]["cpu_system_s"]
    assert abs(stored_s - truth_s) <= 0.10 * truth_s, (stored_s, truth_s)
    assert readings[-1][1] - readings[0][1] > 1.5 * truth_s, "the warm-up was busy too"

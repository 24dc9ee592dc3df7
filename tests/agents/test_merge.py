"""Merging agents' results (by the engine), with real engine runs in this process standing in for
the agents (no Dask here): counts add up, histograms equal an independent merge (the pure-Python
HdrHistogram), timelines align by wall-clock second, a lost agent leaves a partial result that
keeps the others' figures."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gauntlet import engine
from gauntlet.agents.controller import AgentRun, merge_results
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from tests.agents.merging import SCHEMA, VALIDATOR, merged_independently, recorded
from tests.helpers.builtin_stats import server_stats

RESULTS_DOC = (Path(__file__).parents[2] / "docs/results.md").read_text()


def base_plan(url: str, **fields: Any) -> engine.Plan:
    return {"url": url, "connections": 4, "threads": 1, "requests": None, "rate_per_s": None,
            "duration_us": None, "warmup_us": 0, "timeout_us": 5_000_000, **fields}


def run_as_agents(plan: engine.Plan, agents: int, start_offsets_s: list[float] | None = None) -> list[AgentRun]:
    """Each slice run by the engine in its own thread, all given one start instant (shifted by
    `start_offsets_s` to imitate agents whose measurement began later)."""
    start_at_us = time.time_ns() // 1_000 + 300_000
    offsets = start_offsets_s or [0.0] * agents
    runs = [AgentRun(i, f"tcp://127.0.0.1:{9000 + i}", part, 0) for i, part in enumerate(engine.split_plan(plan, agents))]

    def one(run: AgentRun, offset_s: float) -> None:
        timed = {**run.plan, "start_at_unix_us": start_at_us + int(offset_s * 1e6), "timeline_histograms": True}
        run.result = engine.run(timed).result

    threads = [threading.Thread(target=one, args=(run, offset)) for run, offset in zip(runs, offsets, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return runs


def test_counts_add_up_and_histograms_equal_an_independent_merge(builtin_server: ServerInstance) -> None:
    before = server_stats(builtin_server)["requests"]
    plan = base_plan(f"{builtin_server.url}webtest.html", connections=6, requests=3_001)
    runs = run_as_agents(plan, 3)
    merged = merge_results(plan, runs[0].result["plan"]["start_at_unix_us"], runs)
    VALIDATOR.validate(merged)
    assert server_stats(builtin_server)["requests"] - before == merged["requests"] == merged["responses"] == 3_001
    assert [a["requests"] for a in merged["agents"]] == [1_000, 1_000, 1_001]
    assert merged["partial"] is False and {a["state"] for a in merged["agents"]} == {"completed"}
    for key in ("bytes_in", "bytes_out", "connections_opened"):
        assert merged[key] == sum(r.result[key] for r in runs)
    assert merged["status_codes"] == {"200": 3_001} and merged["threads"] == 3
    for field in ("histogram", "service_histogram"):
        assert recorded(merged[field]) == merged_independently([r.result[field] for r in runs])
    assert merged["latency_us"]["count"] == 3_001
    assert merged["elapsed_us"] >= max(r.result["elapsed_us"] for r in runs)
    assert sum(second["requests"] for second in merged["timeline"]) == 3_001
    assert merged["client"]["cpu_us"] == sum(r.result["client"]["cpu_us"] for r in runs)


def test_timelines_align_by_wall_clock_second(builtin_server: ServerInstance) -> None:
    """Two agents at 200/s each for 2 s, the second one's start a second later: merged seconds 0
    and 2 hold one agent's requests, second 1 both, and each merged second's histogram is the
    merge of the agents' same seconds."""
    plan = base_plan(f"{builtin_server.url}hello", rate_per_s=400.0, duration_us=2_000_000)
    runs = run_as_agents(plan, 2, start_offsets_s=[0.0, 1.0])
    merged = merge_results(plan, runs[0].result["plan"]["start_at_unix_us"], runs)
    VALIDATOR.validate(merged)
    timeline = merged["timeline"]
    assert [s["second"] for s in timeline] == [0, 1, 2]
    first, second = (r.result["timeline"] for r in runs)
    assert [s["requests"] for s in timeline] == [
        first[0]["requests"], first[1]["requests"] + second[0]["requests"], second[1]["requests"]
    ]
    assert recorded(timeline[1]["histogram"]) == merged_independently(
        [first[1]["histogram"], second[0]["histogram"]], significant_digits=2
    )
    assert merged["elapsed_us"] == pytest.approx(3_000_000, abs=20_000)
    # 2 agents x 200/s x 2 s sent over the 3 s the merged run spans.
    assert merged["schedule"]["achieved_rate_per_s"] == pytest.approx(800 / (merged["elapsed_us"] / 1e6), rel=0.02)
    sent = merged["schedule"]["requests_sent"]
    assert sent == sum(r.result["schedule"]["requests_sent"] for r in runs)
    assert merged["schedule"]["achieved_rate_per_s"] == sent * 1e6 / merged["elapsed_us"]
    assert recorded(merged["schedule"]["send_lag_histogram"]) == merged_independently(
        [r.result["schedule"]["send_lag_histogram"] for r in runs]
    )


def test_a_lost_agent_leaves_a_partial_result_with_the_others(builtin_server: ServerInstance) -> None:
    plan = base_plan(f"{builtin_server.url}hello", requests=400)
    runs = run_as_agents(plan, 2)
    runs[1].result = None
    runs[1].lost = "its worker left the cluster (the process died or was stopped) (0.2 s after the start)"
    merged = merge_results(plan, runs[0].result["plan"]["start_at_unix_us"], runs)
    VALIDATOR.validate(merged)
    assert merged["partial"] is True and merged["requests"] == 200
    lost = merged["agents"][1]
    assert (lost["state"], lost["address"], lost["requests"], lost["histogram"]) == ("lost", "tcp://127.0.0.1:9001", None, None)
    assert "worker left the cluster" in lost["reason"]
    assert recorded(merged["histogram"]) == recorded(runs[0].result["histogram"])


def test_an_agent_that_can_no_longer_reach_the_target_is_named(builtin_server: ServerInstance) -> None:
    """The server stops half-way through: the agents' last seconds are connect errors only."""
    plan = base_plan(builtin_server.url, duration_us=1_500_000, connections=2, rate_per_s=200.0)
    stopper = threading.Timer(0.3 + 0.7, builtin_server.stop)
    stopper.start()
    runs = run_as_agents(plan, 2)
    stopper.join()
    merged = merge_results(plan, runs[0].result["plan"]["start_at_unix_us"], runs)
    VALIDATOR.validate(merged)
    assert merged["partial"] is True
    for agent in merged["agents"]:
        assert agent["state"] == "unreachable", agent["reason"]
        assert re.match(r"cannot reach the target from second 1 to its end \(connect_refused \d+", agent["reason"])


def test_no_result_at_all_is_an_error_naming_each_agent() -> None:
    runs = [AgentRun(i, f"tcp://127.0.0.1:{9000 + i}", base_plan("http://127.0.0.1:1/", requests=2), 0) for i in range(2)]
    runs[0].lost = "its task failed"
    with pytest.raises(GauntletError, match=r"no agent returned a result \(tcp://127.0.0.1:9000: its task failed; tcp://127.0.0.1:9001"):
        merge_results(runs[0].plan, 0, runs)


def test_docs_results_names_every_agent_field() -> None:
    agent, agent_slice = SCHEMA["$defs"]["AgentFigures"], SCHEMA["$defs"]["SliceFigures"]
    named = set(re.findall(r"`([a-z0-9_]+)`", RESULTS_DOC))
    assert {*agent["properties"], *agent_slice["properties"]} - named == set()

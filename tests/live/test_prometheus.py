"""`--live`'s /metrics scraped by Debian's real Prometheus (every second, on loopback, its own config
and data directory): what Prometheus stored equals the stored result of each case."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gauntlet.store import Store
from tests.helpers.cli_process import run_cli
from tests.live.prometheus import Prometheus, free_port, prometheus_scraping

pytestmark = pytest.mark.slow


def last(prometheus: Prometheus, name: str, selector: str) -> list[dict[str, Any]]:
    """Every series of `name` matching `selector`, each at its last scraped value."""
    return prometheus.query(f"last_over_time({name}{{{selector}}}[10m])")


def one(prometheus: Prometheus, name: str, selector: str) -> float:
    found = last(prometheus, name, selector)
    assert len(found) == 1, (name, selector, found)
    return float(found[0]["value"])


def cpu_s_by_role(timeline: list[dict[str, Any]]) -> dict[str, float]:
    """The server's CPU seconds per role over the monitor's points (each role's % of a core times
    the time since the point before)."""
    found: dict[str, float] = {}
    for before_t_s, point in zip([0.0, *(p["t_s"] for p in timeline)], timeline, strict=False):
        for role, used in point["roles"].items():
            found[role] = found.get(role, 0.0) + used["cpu_percent"] / 100 * (point["t_s"] - before_t_s)
    return found


def test_prometheus_holds_each_cases_stored_figures(tmp_path: Path) -> None:
    live_port = free_port()
    db = tmp_path / "results.db"
    with prometheus_scraping(f"127.0.0.1:{live_port}", tmp_path) as prometheus:
        done = run_cli(
            "run", "--live", f"127.0.0.1:{live_port}", "-d", "3s", "--repeat", "2", "-c", "4", "-t", "1", "--db", db,
            timeout_s=120,
        )
        assert done.code == 0, done.stderr[-3000:]
        assert re.search(rf"^live: http://127\.0\.0\.1:{live_port}/$", done.stderr, re.MULTILINE), done.stderr
        with Store.open_read_only(db) as store:
            (run,) = store.runs()
            cases = store.cases([run.run_id])
        assert [case.repeat for case in cases] == [0, 1]
        # The first repeat ended 3 s before the command did: Prometheus scraped its final figures.
        case = cases[0]
        result = case.result
        assert result is not None
        selector = f'run_id="{run.run_id}",repeat="0"'
        (requests,) = last(prometheus, "gauntlet_requests_total", selector)
        assert requests["metric"] | {"__name__": None} == {
            "__name__": None, "run_id": str(run.run_id), "case_key": case.key, "case": requests["metric"]["case"], "repeat": "0",
            "server_kind": "builtin", "server_version": case.server_version, "job": "gauntlet",
            "instance": f"127.0.0.1:{live_port}",
        }
        assert requests["value"] == result["requests"] > 0
        assert one(prometheus, "gauntlet_responses_total", selector) == result["responses"]
        assert one(prometheus, "gauntlet_received_bytes_total", selector) == result["bytes_in"]
        errors = {s["metric"]["kind"]: s["value"] for s in last(prometheus, "gauntlet_errors_total", selector)}
        assert errors == {kind: n for kind, n in result["errors"].items() if n}
        latency = result["latency_us"]
        for quantile, name in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99"), ("0.999", "p99_9")):
            scraped = one(prometheus, "gauntlet_latency_seconds", f'{selector},quantile="{quantile}"')
            assert scraped == pytest.approx(latency[name] / 1e6, rel=1e-12), quantile
        assert one(prometheus, "gauntlet_latency_seconds_count", selector) == latency["count"]
        assert one(prometheus, "gauntlet_latency_max_seconds", selector) == pytest.approx(latency["max"] / 1e6, rel=1e-12)
        assert one(prometheus, "gauntlet_achieved_rate_per_second", selector) == pytest.approx(result["requests_per_s"], rel=1e-12)
        assert one(prometheus, "gauntlet_unanswered_requests", selector) == result["unanswered"]["count"]
        rss = {s["metric"]["role"]: s["value"] for s in last(prometheus, "gauntlet_server_rss_bytes", selector)}
        assert rss == {role: memory["rss_bytes"] for role, memory in result["server"]["memory"].items()} != {}
        cpu = {s["metric"]["role"]: s["value"] for s in last(prometheus, "gauntlet_server_cpu_seconds_total", selector)}
        assert cpu == pytest.approx(cpu_s_by_role(result["server"]["timeline"]), rel=1e-9)
        assert sum(cpu.values()) > 0
        # While the second repeat ran, its series said so and counted its seconds as they came.
        running = f'run_id="{run.run_id}",repeat="1"'
        assert prometheus.query(f"max_over_time(gauntlet_case_running{{{running}}}[10m])")[0]["value"] == 1
        counted = prometheus.samples(f"gauntlet_requests_total{{{running}}}")
        assert any(0 < value < cases[1].result["requests"] for value in counted), counted
        assert counted == sorted(counted), "a counter never goes down"

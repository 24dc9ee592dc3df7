"""Each invariant held by a sound case and broken, for real, by the fault it is there to catch;
a breach is stored with its case and shown apart in the terminal summary."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from gauntlet import engine
from gauntlet.analysis.invariants import (
    CPU_BUDGET, MONITOR_SAMPLES, SERVER_LOG_COUNT, LoggedCount, check_all, cpu_budget,
)
from gauntlet.lab.access_log import LoggedRequests
from gauntlet.lab.case import measure
from gauntlet.lab.measure import DEFAULT_SETTINGS, measure_run
from gauntlet.monitor.per_request import per_request
from gauntlet.monitor.sampler import Sampler
from gauntlet.plan import Plan
from gauntlet.report.tables import print_summary
from gauntlet.servers.spec import ServerSpec
from gauntlet.store import Store
from tests.conftest import Start, require_available
from tests.helpers.cli_process import run_cli

CORES = os.cpu_count() or 1


def test_a_sound_case_holds_every_invariant(server: Start) -> None:
    instance = server("nginx", workers=2, access_log=True)
    plan = Plan(url=f"{instance.url}webtest.html", connections=8, threads=1, warmup_us=500_000, duration_us=1_500_000)
    result = measure_run(plan, instance, DEFAULT_SETTINGS).result
    checks = result["invariants"]["checks"]
    assert result["invariants"]["breaches"] == [], checks
    assert [checks[name]["held"] for name in (CPU_BUDGET, MONITOR_SAMPLES, SERVER_LOG_COUNT)] == [True, True, True]


def test_a_window_that_counts_the_warm_up_breaks_the_cpu_budget(server: Start) -> None:
    """The monitor as it was: its figures from its first reading to its last, a 2 s warm-up
    included, divided over a 0.2 s measured interval."""
    instance = server("nginx", workers=2)
    plan = {"url": f"{instance.url}webtest.html", "connections": 20, "threads": 1, "warmup_us": 2_000_000, "duration_us": 200_000}
    with Sampler.of(instance) as sampler:
        result = engine.run(plan).result
    result["server"] = per_request(sampler.totals(), result["requests"])
    check = cpu_budget(result, CORES)
    assert check.held is False, check.detail
    windowed = {**result, "server": per_request(sampler.totals((
        result["measured_from_monotonic_us"] / 1e6, result["measured_to_monotonic_us"] / 1e6,
    )), result["requests"])}
    assert cpu_budget(windowed, CORES).held is True, "the same run over its measured interval fits"


def test_a_short_case_breaks_the_monitor_samples_and_is_stored_and_shown_apart(server: Start, tmp_path: Path) -> None:
    instance = server("nginx", workers=2)
    plan = Plan(url=f"{instance.url}webtest.html", connections=2, threads=1, requests=200)
    record = measure(plan, instance, {"server": "nginx", "case": "short"}).record
    assert record.result is not None
    assert record.breaches == [MONITOR_SAMPLES], record.result["invariants"]
    assert record.result["server"]["samples"] < 3
    with Store.open(tmp_path / "results.db") as store:
        run_id = store.begin_run(suite="t", suite_text=None, options={}, environment={}, planned_cases=1)
        store.add_case(run_id, record)
        assert [case.breaches for case in store.cases([run_id])] == [[MONITOR_SAMPLES]]
        out = io.StringIO()
        print_summary(Console(file=out, width=200), store, run_id)
    shown = out.getvalue()
    assert "Cases whose result breaks an invariant" in shown and "monitor-samples: " in shown, shown


def test_a_second_client_breaks_the_server_log_count(server: Start) -> None:
    instance = server("nginx", workers=2, access_log=True)
    url = f"{instance.url}webtest.html"
    measured_plan = Plan(url=url, connections=4, threads=1, warmup_us=300_000, duration_us=1_000_000)
    other = threading.Thread(target=engine.run, args=({"url": url, "connections": 4, "threads": 1, "duration_us": 2_000_000},))
    other.start()
    try:
        result = measure_run(measured_plan, instance, DEFAULT_SETTINGS).result
    finally:
        other.join()
    check = result["invariants"]["checks"][SERVER_LOG_COUNT]
    assert SERVER_LOG_COUNT in result["invariants"]["breaches"], check
    assert check_all(result, CORES, LoggedCount(result["responses"], 0, 0))["checks"][SERVER_LOG_COUNT]["held"] is True


def test_a_log_read_late_is_checked_against_what_the_engine_counted_by_then(server: Start, monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread that reads the log's size, held up 300 ms (as a loaded machine may): the
    responses of those 300 ms are the engine's count at the read, not the run's rate times it."""
    instance = server("nginx", workers=2, access_log=True)
    mark, by_then = LoggedRequests.mark, []

    def late_mark(self: LoggedRequests, counted: Callable[[], int]) -> None:
        time.sleep(0.3)
        mark(self, counted)
        by_then.append(counted())

    monkeypatch.setattr(LoggedRequests, "mark", late_mark)
    plan = Plan(url=f"{instance.url}webtest.html", connections=4, threads=1, warmup_us=200_000, duration_us=1_500_000)
    result = measure_run(plan, instance, DEFAULT_SETTINGS).result
    check = result["invariants"]["checks"][SERVER_LOG_COUNT]
    assert check["held"] is True, check
    assert by_then[0] > 100, "the engine had answered some 300 ms of requests before the read"


def test_gauntlet_run_prints_a_breach_and_writes_it_to_the_json(tmp_path: Path) -> None:
    require_available(ServerSpec("nginx"))
    out = tmp_path / "short.json"
    done = run_cli("run", "--server", "nginx", "--workers", "2", "-n", "200", "-c", "2", "--json", out)
    assert done.code == 0, done.stderr
    assert json.loads(out.read_text())["invariants"]["breaches"] == [MONITOR_SAMPLES]
    assert "breaks monitor-samples: " in done.stdout, done.stdout

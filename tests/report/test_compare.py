"""`gauntlet compare` on a real regression: the same cases, then with a delay injected in the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gauntlet.model.record import CaseRecord
from gauntlet.report.compare import compare, warnings
from gauntlet.servers.builtin import start_builtin
from gauntlet.store import Store
from tests.conftest import Started
from tests.helpers.cli_process import run_cli
from tests.helpers.measured import MEASURE_S, load_case

DELAY = "?delay_ms=20"
BASE_ENVIRONMENT = {"cpu": {"cores": 2}, "kernel": "6.1.0", "load_average": [0.1, 0.1, 0.1], "taken_unix_ms": 1}


#: A run to store: its suite text, environment, and cases as (params, repeat, query).
RunCases = tuple[str | None, dict[str, Any], list[tuple[dict[str, Any], int, str]]]


def stored_runs(path: Path, runs: list[RunCases], measure_s: float = MEASURE_S) -> list[int]:
    """Each run measured on one built-in server and stored; their ids."""
    started = Started()
    try:
        server = started.add(start_builtin(threads=2))
        with Store.open(path) as store:
            run_ids = []
            for suite_text, environment, cases in runs:
                run_id = store.begin_run(
                    suite="compared", suite_text=suite_text, options={}, environment=environment, planned_cases=len(cases)
                )
                for params, repeat, query in cases:
                    store.add_case(run_id, load_case(server, params, repeat=repeat, query=query, measure_s=measure_s))
                store.end_run(run_id, "complete")
                run_ids.append(run_id)
    finally:
        started.stop_all_and_check()
    return run_ids


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """(database, baseline run, slowed run): connections 2 and 4 in both; 8 in the baseline only."""
    path = tmp_path_factory.mktemp("compare") / "results.db"
    slowed_environment = {**BASE_ENVIRONMENT, "kernel": "6.12.0", "load_average": [1.5, 1, 1], "taken_unix_ms": 2}
    baseline, slowed = stored_runs(path, [
        (None, environment, [({"path": "/webtest.html", "connections": c}, 0, query) for c in levels])
        for query, levels, environment in (("", (2, 4, 8), BASE_ENVIRONMENT), (DELAY, (2, 4), slowed_environment))
    ])
    return path, baseline, slowed


def test_a_delay_is_a_regression_and_fails_ci(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, slowed = two_runs
    done = run_cli("compare", str(baseline), str(slowed), "--db", path)
    assert done.code == 1, done.stdout + done.stderr
    flagged = [line.split() for line in done.stdout.splitlines() if line.rstrip().endswith("REGRESSION")]
    assert ["2", "conns", "requests/s"] in [words[:3] for words in flagged], done.stdout
    # 0.3 s at 20 ms a response is too few responses for a p99 (1,000): its median is compared instead.
    assert ["4", "conns", "p50"] in [words[:3] for words in flagged], done.stdout
    assert ["4", "conns", "p99", "-", "-", "-", "-", "n", "too", "small"] in [line.split()[:10] for line in done.stdout.splitlines()]
    assert "baseline run 1: builtin 0.1.0; suite compared\nnew      run 2: builtin 0.1.0; suite compared" in done.stdout
    assert "1 cases only in run 1: not compared" in done.stdout
    assert "2 cases compared; " in done.stdout
    # The load and the time of day always differ: only what matters for the figures is named.
    assert done.stderr.startswith("warning: the runs' environments differ (kernel: 6.1.0 -> 6.12.0); "), done.stderr


def test_the_threshold_decides_the_exit_code(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, slowed = two_runs
    with Store.open(path, create=False) as store:
        found = compare(store.cases([baseline]), store.cases([slowed]), {}, {})
    sizes_pct = sorted(abs(c.verdict.change.point) * 100 for _, c in found.regressions() if c.verdict is not None)
    assert {c.figure for _, c in found.regressions()} >= {"requests_per_s", "latency_p50_us"}
    above = run_cli("compare", str(baseline), str(slowed), "--db", path, "--threshold", f"{sizes_pct[-1] + 1:.0f}")
    assert above.code == 0, above.stdout
    below = run_cli("compare", str(baseline), str(slowed), "--db", path, "--threshold", f"{sizes_pct[0] - 1:.0f}")
    assert below.code == 1, below.stdout


def test_an_improvement_is_no_regression(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, slowed = two_runs
    done = run_cli("compare", str(slowed), str(baseline), "--db", path)
    assert done.code == 0, done.stdout
    assert "0 regressions detected" in done.stdout and "improvements" in done.stdout
    assert "1 cases only in run 1: not compared" in done.stdout


def test_comparing_an_unknown_run_is_a_one_line_error(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, _ = two_runs
    done = run_cli("compare", str(baseline), "99", "--db", path)
    assert done.code == 2 and done.stderr.startswith("gauntlet: error: there is no run 99 in") and done.stderr.count("\n") == 1


#: Every request waits this long in the server: under the short timeout, every one times out.
SLOW = "?delay_ms=150"
TIMEOUTS_S = (2.0, 0.05)
SUITE_TEXT = "servers: [builtin]\ndefaults:\n  timeout: {}\n"


@pytest.fixture(scope="module")
def timeout_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """(database, run with a 2 s timeout, the same suite with 50 ms): two levels, two repeats each."""
    path = tmp_path_factory.mktemp("timeouts") / "results.db"
    long_timeout, short_timeout = stored_runs(path, [
        (SUITE_TEXT.format(f"{timeout_s}s"), BASE_ENVIRONMENT, [
            ({"path": "/webtest.html", "connections": c, "timeout_s": timeout_s}, repeat, SLOW) for c in (2, 4) for repeat in (0, 1)
        ])
        for timeout_s in TIMEOUTS_S
    ], measure_s=0.5)
    return path, long_timeout, short_timeout


def test_a_shorter_timeout_that_fails_requests_is_a_regression(timeout_runs: tuple[Path, int, int]) -> None:
    """Issue 18: runs differing only in timeout, failed share 0 % -> 100 %: flagged, exit 1, and both
    the changed setting and the suite files' changed line are named."""
    path, long_timeout, short_timeout = timeout_runs
    with Store.open(path, create=False) as store:
        before, after = store.cases([long_timeout]), store.cases([short_timeout])
    assert all(c.figures["failed_share"] == 0 for c in before)
    # A response the starved client reads before it checks the timer may still count, on a busy machine.
    assert all(c.figures["failed_share"] > 0.9 and c.figures["errors_timeout"] > 0 for c in after)
    done = run_cli("compare", str(long_timeout), str(short_timeout), "--db", path)
    assert done.code == 1, done.stdout + done.stderr
    flagged = [line.split() for line in done.stdout.splitlines() if line.rstrip().endswith("REGRESSION")]
    for level in ("2", "4"):
        for figure in (["failed"], ["timeout", "errors"]):
            row = next((w for w in flagged if w[:2 + len(figure)] == [level, "conns", *figure]), None)
            assert row is not None, done.stdout
            baseline, new, change, unit = row[2 + len(figure):6 + len(figure)]
            assert (baseline, unit) == ("0.0%", "pts") and float(new.rstrip("%")) > 90 and float(change) > 90, row
    assert "2 cases compared; " in done.stdout, "the cases pair across the changed timeout"
    assert "warning: the runs differ in a setting of every case (timeout_s: 2 s timeout -> 0.05 s timeout)" in done.stderr
    assert "warning: the runs' suite files differ (-  timeout: 2.0s | +  timeout: 0.05s)" in done.stderr


def test_the_same_failures_are_no_change(timeout_runs: tuple[Path, int, int]) -> None:
    path, _, short_timeout = timeout_runs
    with Store.open(path, create=False) as store:
        cases = store.cases([short_timeout])
    found = compare(cases, cases, {}, {})
    shares = [c for case in found.cases for c in case.changes if c.figure in ("failed_share", "errors_timeout")]
    assert len(shares) == 4 and not any(c.regression for c in shares)
    assert all(c.verdict is not None and c.verdict.kind == "no change detected" for c in shares)
    assert found.setting_differences == [] and not found.only_before


def test_runs_that_speak_differently_pair_no_case(tmp_path: Path) -> None:
    """Issue 16: HTTP/2 at 10 streams a connection, at 1, and HTTP/1.1 measure different cases: no
    pairing across them (the cases are stored unmeasured; only their keys matter here)."""
    spoken = {"h2 x10": {"http_version": "2", "streams": 10}, "h2 x1": {"http_version": "2", "streams": 1}, "http/1.1": {}}
    runs = {}
    with Store.open(tmp_path / "results.db") as store:
        for name, protocol in spoken.items():
            run_id = store.begin_run(suite="compared", suite_text=None, options={}, environment={}, planned_cases=1)
            params = {"server": "nginx", "protocol": "https", "connections": 4, **protocol}
            store.add_case(run_id, CaseRecord(params, error="not measured: this test compares keys"))
            store.end_run(run_id, "complete")
            runs[name] = store.cases([run_id])
    assert len(compare(runs["h2 x10"], runs["h2 x10"], {}, {}).cases) == 1
    for before, after, difference in [
        ("h2 x10", "h2 x1", "streams: 10 streams/conn -> 1 stream/conn"),
        ("h2 x1", "http/1.1", "http_version: HTTP/2 -> not set; streams: 1 stream/conn -> not set"),
    ]:
        found = compare(runs[before], runs[after], {}, {})
        assert (found.cases, len(found.only_before), len(found.only_after)) == ([], 1, 1)
        assert found.protocol_differences == difference.split("; ") and found.setting_differences == []
        assert warnings(found, None, None) == [
            f"the runs speak differently in every case ({difference}); such cases measure different things and are not paired"
        ]


@pytest.mark.parametrize(
    ("clients", "words"),
    [
        (({"io_batch_us": 0}, {"io_batch_us": 400}), "no batch window, SCHED_BATCH -> batch window 400 µs, SCHED_BATCH"),
        (({"scheduling": "normal"}, {}), "no batch window, normal scheduling -> no batch window, SCHED_BATCH"),
    ],
)
def test_a_client_that_ran_otherwise_is_warned_of(tmp_path: Path, clients: tuple[dict[str, Any], ...], words: str) -> None:
    """By default each run's warm-up decides the client's batch window, and results from before
    SCHED_BATCH ran under the normal policy: where the two runs' clients differ, the cases still
    pair, and compare says so (pinned here to provoke it)."""
    started = Started()
    try:
        server = started.add(start_builtin(threads=2))
        with Store.open(tmp_path / "results.db") as store:
            run_ids = []
            for client in clients:
                run_id = store.begin_run(suite="compared", suite_text=None, options={}, environment={}, planned_cases=1)
                store.add_case(run_id, load_case(server, {"connections": 20}, client=client))
                store.end_run(run_id, "complete")
                run_ids.append(run_id)
            before, after = (store.cases([run_id]) for run_id in run_ids)
    finally:
        started.stop_all_and_check()
    found = compare(before, after, {}, {})
    assert len(found.cases) == 1
    assert found.client_differences() == [f"{found.cases[0].before.key}: {words}"]
    assert any(line.startswith("the client ran otherwise in 1 paired cases") for line in warnings(found, None, None))
    assert compare(after, after, {}, {}).client_differences() == []

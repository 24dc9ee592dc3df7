"""`gauntlet compare` on a real regression: the same cases, then with a delay injected in the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from gauntlet.report.compare import compare
from gauntlet.servers.builtin import start_builtin
from gauntlet.store import Store
from tests.conftest import Started
from tests.helpers.cli_process import run_cli
from tests.helpers.measured import load_case

DELAY = "?delay_ms=20"
BASE_ENVIRONMENT = {"cpu": {"cores": 2}, "kernel": "6.1.0", "load_average": [0.1, 0.1, 0.1], "taken_unix_ms": 1}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """(database, baseline run, slowed run): connections 2 and 4 in both; 8 in the baseline only."""
    path = tmp_path_factory.mktemp("compare") / "results.db"
    started = Started()
    try:
        server = started.add(start_builtin(threads=2))
        with Store.open(path) as store:
            run_ids = []
            for query, levels, environment in (
                ("", (2, 4, 8), BASE_ENVIRONMENT),
                (DELAY, (2, 4), {**BASE_ENVIRONMENT, "kernel": "6.12.0", "load_average": [1.5, 1, 1], "taken_unix_ms": 2}),
            ):
                run_id = store.begin_run(
                    suite="delay", suite_text=None, options={}, environment=environment, planned_cases=len(levels)
                )
                for connections in levels:
                    store.add_case(run_id, load_case(server, {"path": "/webtest.html", "connections": connections}, query=query))
                store.end_run(run_id, "complete")
                run_ids.append(run_id)
    finally:
        started.stop_all_and_check()
    return path, run_ids[0], run_ids[1]


def test_a_delay_is_a_regression_and_fails_ci(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, slowed = two_runs
    done = run_cli("compare", str(baseline), str(slowed), "--db", path)
    assert done.code == 1, done.stdout + done.stderr
    flagged = [line.split() for line in done.stdout.splitlines() if line.rstrip().endswith("REGRESSION")]
    assert ["2", "conns", "requests/s"] in [words[:3] for words in flagged], done.stdout
    assert ["4", "conns", "p99"] in [words[:3] for words in flagged], done.stdout
    assert "1 cases only in run 1: not compared" in done.stdout
    assert "2 cases compared; " in done.stdout
    # The load and the time of day always differ: only what matters for the figures is named.
    assert done.stderr.startswith("warning: the runs' environments differ (kernel: 6.1.0 -> 6.12.0); "), done.stderr


def test_the_threshold_decides_the_exit_code(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, slowed = two_runs
    with Store.open(path, create=False) as store:
        found = compare(store.cases([baseline]), store.cases([slowed]), {}, {})
    sizes_pct = sorted(abs(change.change) * 100 for _, change in found.regressions())
    assert {change.figure for _, change in found.regressions()} >= {"requests_per_s", "latency_p99_us"}
    above = run_cli("compare", str(baseline), str(slowed), "--db", path, "--threshold", f"{sizes_pct[-1] + 1:.0f}")
    assert above.code == 0, above.stdout
    below = run_cli("compare", str(baseline), str(slowed), "--db", path, "--threshold", f"{sizes_pct[0] - 1:.0f}")
    assert below.code == 1, below.stdout


def test_an_improvement_is_no_regression(two_runs: tuple[Path, int, int]) -> None:
    path, baseline, slowed = two_runs
    done = run_cli("compare", str(slowed), str(baseline), "--db", path)
    assert done.code == 0, done.stdout
    assert "0 regressions beyond the runs' spread" in done.stdout
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
    started = Started()
    try:
        server = started.add(start_builtin(threads=2))
        with Store.open(path) as store:
            run_ids = []
            for timeout_s in TIMEOUTS_S:
                run_id = store.begin_run(suite="slow", suite_text=SUITE_TEXT.format(f"{timeout_s}s"), options={},
                                         environment=BASE_ENVIRONMENT, planned_cases=4)
                for connections in (2, 4):
                    for repeat in (0, 1):
                        params = {"path": "/webtest.html", "connections": connections, "timeout_s": timeout_s}
                        store.add_case(run_id, load_case(server, params, repeat=repeat, query=SLOW, measure_s=0.5))
                store.end_run(run_id, "complete")
                run_ids.append(run_id)
    finally:
        started.stop_all_and_check()
    return path, run_ids[0], run_ids[1]


def test_a_shorter_timeout_that_fails_requests_is_a_regression(timeout_runs: tuple[Path, int, int]) -> None:
    """Issue 18: runs differing only in timeout, failed share 0 % -> 100 %: flagged, exit 1, and both
    the changed setting and the suite files' changed line are named."""
    path, long_timeout, short_timeout = timeout_runs
    with Store.open(path, create=False) as store:
        before, after = store.cases([long_timeout]), store.cases([short_timeout])
    assert all(c.figures["failed_share"] == 0 for c in before)
    assert all(c.figures["failed_share"] == 1 and c.figures["errors_timeout"] > 0 for c in after)
    done = run_cli("compare", str(long_timeout), str(short_timeout), "--db", path)
    assert done.code == 1, done.stdout + done.stderr
    flagged = [line.split() for line in done.stdout.splitlines() if line.rstrip().endswith("REGRESSION")]
    for level in ("2", "4"):
        assert [level, "conns", "failed", "0.0%", "100.0%", "+100.0", "pts"] in [w[:7] for w in flagged], done.stdout
        assert [level, "conns", "timeout", "errors", "0.0%", "100.0%"] in [w[:6] for w in flagged], done.stdout
    assert "2 cases compared; " in done.stdout, "the cases pair across the changed timeout"
    assert "warning: the runs differ in a setting of every case (timeout_s: 2 s timeout -> 0.05 s timeout)" in done.stderr
    assert "warning: the runs' suite files differ (-  timeout: 2.0s | +  timeout: 0.05s)" in done.stderr


def test_the_same_failures_are_inside_the_spread(timeout_runs: tuple[Path, int, int]) -> None:
    path, _, short_timeout = timeout_runs
    with Store.open(path, create=False) as store:
        cases = store.cases([short_timeout])
    found = compare(cases, cases, {}, {})
    shares = [c for case in found.cases for c in case.changes if c.figure in ("failed_share", "errors_timeout")]
    assert len(shares) == 4 and not any(c.regression for c in shares)
    assert found.setting_differences == [] and not found.only_before

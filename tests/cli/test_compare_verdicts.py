"""compare's verdicts on real runs of the built-in server: identical runs (A/A) are no change, a held
response (A/B, ?delay_ms=1) is a latency regression with exit 1; the noise floor measured by
`gauntlet calibrate noise` is stored and used, and an unmeasured one is said to be."""

from __future__ import annotations

from pathlib import Path

from gauntlet.store import Store
from tests.helpers.cli_process import Finished, run_cli

#: Short enough for CI (each run about 4 s); three repeats give each side a bootstrap interval.
IDENTICAL = ("run", "-c", "10", "-d", "2s", "--repeat", "3")


def stored_run(db: Path, *extra: str) -> None:
    done = run_cli(*IDENTICAL, *extra, "--db", db, timeout_s=90)
    assert done.code == 0, done.stderr


def compared(db: Path, before: int, after: int) -> Finished:
    return run_cli("compare", str(before), str(after), "--db", db, timeout_s=60)


def verdict_lines(done: Finished) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.rstrip().endswith(("REGRESSION", "improvement"))]


def test_identical_runs_are_no_change_and_exit_0(tmp_path: Path) -> None:
    """A/A: two pairs of identical runs; neither exits 1, and at most one figure of one pair is
    called a change (the default floors, since this store was never calibrated)."""
    db = tmp_path / "aa.db"
    for _ in range(4):
        stored_run(db)
    pairs = [compared(db, 1, 2), compared(db, 3, 4)]
    assert [done.code for done in pairs] == [0, 0], [done.stdout for done in pairs]
    assert sum(len(verdict_lines(done)) for done in pairs) <= 1, [done.stdout for done in pairs]
    for done in pairs:
        assert "no change detected (within ±" in done.stdout
        assert "noise floor not measured on this machine: run gauntlet calibrate noise" in done.stdout
        assert "0 regressions detected" in done.stdout


def test_a_held_response_is_a_latency_regression_and_exits_1(tmp_path: Path) -> None:
    """A/B: the same run against ?delay_ms=1 (the server holds each response 1 ms)."""
    db = tmp_path / "ab.db"
    stored_run(db)
    stored_run(db, "--path", "/webtest.html?delay_ms=1")
    done = compared(db, 1, 2)
    assert done.code == 1, done.stdout + done.stderr
    flagged = [line.split() for line in done.stdout.splitlines() if line.rstrip().endswith("REGRESSION")]
    assert any(words[:1] == ["p50"] or "p50" in words[:4] for words in flagged), done.stdout
    assert "baseline run 1: builtin" in done.stdout and "/webtest.html\n" in done.stdout
    assert "new      run 2: builtin" in done.stdout and "/webtest.html?delay_ms=1" in done.stdout
    assert "(path: /webtest.html -> /webtest.html?delay_ms=1)" in done.stderr


def test_calibrate_noise_stores_the_floor_and_compare_uses_it(tmp_path: Path) -> None:
    db = tmp_path / "noise.db"
    done = run_cli("calibrate", "noise", "--pairs", "2", "-d", "1s", "--warmup", "300ms", "--db", db, timeout_s=90)
    assert done.code == 0, done.stderr
    assert "Noise floor from 2 A/A pairs" in done.stdout
    with Store.open(db, create=False) as store:
        floors = store.noise_floors()
        (run,) = store.runs()
        cases = store.cases([run.run_id])
    assert {"requests_per_s", "latency_p50_us", "server_cpu_us_per_request"} <= set(floors)
    assert all(floor.relative > 0 for floor in floors.values())
    assert run.command == "calibrate" and run.stored_cases == 4
    assert "2 A/A pairs on builtin, 2 workers, -c 10 -d 1s --warmup 300ms" in floors["requests_per_s"].source
    # Each run had the warm-up, and in it the engine's trial of its batch window, as a suite's cases do.
    assert [case.result["client"]["batch_trial"] is not None for case in cases if case.result] == [True] * 4
    # Two more identical runs (single ones: quicker), judged against the stored floors: only figures without one fall back.
    for _ in range(2):
        done = run_cli("run", "-c", "10", "-d", "1s", "--db", db, timeout_s=60)
        assert done.code == 0, done.stderr
    pair = compared(db, 2, 3)
    assert pair.code == 0, pair.stdout
    fallback = next((line for line in pair.stdout.splitlines() if "default floors used for" in line), "")
    assert not any(name in fallback for name in floors), fallback


def test_a_server_cpu_below_the_counters_steps_is_not_compared(tmp_path: Path) -> None:
    """20 requests take a few ms: the server's work just after them (closing the connections) or
    /proc's 10 ms ticks outweigh them, which compare once called a +1,551 % regression."""
    db = tmp_path / "thin.db"
    for _ in range(2):
        done = run_cli("run", "-c", "2", "-n", "20", "--db", db, timeout_s=60)
        assert done.code == 0, done.stderr
    done = compared(db, 1, 2)
    (row,) = [line for line in done.stdout.splitlines() if "server µs/req" in line]
    assert "too little CPU to measure (measured over " in row and "; the monitor needs 0.5 s)" in row, done.stdout
    assert "REGRESSION" not in row and "improvement" not in row

"""The measuring commands store their runs by default: `run` and `sweep` land in the results
database, and `report`, `compare` and `export` read them as they read a suite's."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from gauntlet.store import Store
from gauntlet.store.schema import SCHEMA_VERSION
from tests.helpers.cli_process import run_cli

REQUESTS = 300


def run_twice(db: Path) -> None:
    for _ in range(2):
        done = run_cli("run", "-n", str(REQUESTS), "-c", "2", "-t", "1", "--db", db, timeout_s=60)
        assert done.code == 0, done.stderr


def test_a_run_is_stored_and_report_draws_it(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = run_cli("run", "-n", str(REQUESTS), "-c", "2", "-t", "1", "--db", db, timeout_s=60)
    assert done.code == 0, done.stderr
    assert f"stored as run 1 in {db}" in done.stderr
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
        (case,) = store.cases([run.run_id])
    assert (run.command, run.status, run.stored_cases) == ("run", "complete", 1)
    assert case.result is not None and case.result["responses"] == REQUESTS
    assert case.params == {
        "group": "run", "server": "builtin", "workers": 1, "protocol": "http", "keepalive": True,
        "path": "/webtest.html", "model": "closed", "connections": 2, "requests": REQUESTS,
    }
    report = tmp_path / "report.html"
    drawn = run_cli("report", "--db", db, "-o", report, timeout_s=60)
    assert drawn.code == 0, drawn.stderr
    assert "run 1: gauntlet run, complete, 1 of 1 cases stored" in drawn.stdout.replace("\n", " ")
    assert "builtin" in drawn.stdout and report.stat().st_size > 0


def test_compare_compares_two_stored_runs_of_gauntlet_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_twice(db)
    done = run_cli("compare", "1", "2", "--db", db, "--threshold", "1000", timeout_s=60)
    assert done.code == 0, done.stderr
    assert "1 cases compared" in done.stdout
    exported = run_cli("export", "2", "--db", db, "--format", "csv", timeout_s=60)
    assert exported.code == 0, exported.stderr
    (row,) = csv.DictReader(io.StringIO(exported.stdout))
    assert (row["run_id"], row["connections"], row["responses"]) == ("2", "2", str(REQUESTS))


def test_a_sweep_stores_one_case_per_step(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = run_cli("sweep", "concurrency", "--levels", "1,2", "-n", "200", "-t", "1", "--db", db, timeout_s=90)
    assert done.code == 0, done.stderr
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
        cases = store.cases([run.run_id])
    assert (run.command, run.status) == ("sweep", "complete")
    assert [(c.params["connections"], c.result and c.result["responses"]) for c in cases] == [(1, 200), (2, 200)]


def test_no_store_writes_no_database_and_the_default_is_results_db(tmp_path: Path) -> None:
    done = run_cli("run", "-n", "100", "-c", "1", "--no-store", timeout_s=60)
    assert done.code == 0, done.stderr
    assert not (tmp_path / "results.db").exists() and "stored as run" not in done.stderr
    done = run_cli("run", "-n", "100", "-c", "1", timeout_s=60)
    assert done.code == 0, done.stderr
    with Store.open(tmp_path / "results.db", create=False) as store:
        assert [run.command for run in store.runs()] == ["run"]


def test_a_store_of_the_first_schema_learns_which_command_made_each_run(tmp_path: Path) -> None:
    import sqlite3

    from gauntlet.store.schema import migrations

    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.executescript(migrations()[0].sql)
        conn.execute("PRAGMA user_version = 1")
        for suite, text in (("quick", "servers: [builtin]\n"), ("calibrate", None)):
            conn.execute(
                "INSERT INTO runs (suite, suite_text, options_json, environment_json, planned_cases, gauntlet_version,"
                " started_unix_ms, status) VALUES (?, ?, '{}', '{}', 0, '0.1.0', 0, 'complete')",
                (suite, text),
            )
    with Store.open(db, create=False) as store:
        assert [(run.suite, run.command) for run in store.runs()] == [("quick", "suite"), ("calibrate", "calibrate")]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2


def test_a_suite_with_no_store_reports_and_leaves_no_database(tmp_path: Path) -> None:
    done = run_cli("suite", "run", "quick", "--quick", "--servers", "builtin", "--no-store", "-o", "r.html", timeout_s=300)
    assert done.code == 0, done.stderr
    assert "not stored (--no-store)" in done.stderr
    assert (tmp_path / "r.html").stat().st_size > 0
    assert not list(tmp_path.glob("*.db"))

"""The store through a real SQLite file: what goes in comes out, whole; runs, resumes, versions."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.model.record import CaseRecord
from gauntlet.servers.base import ServerInstance
from gauntlet.store import Store
from gauntlet.store.figures import FIGURES, figures_of
from gauntlet.store.schema import SCHEMA_VERSION, migrations
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import Running, run_cli

ENVIRONMENT = {"cpu": {"model": "as measured", "cores": 2}, "kernel": "6.1.0", "sysctl": {"net.core.somaxconn": 4096}}


def new_run(store: Store, planned_cases: int = 1) -> int:
    return store.begin_run(suite="quick", suite_text="servers: [builtin]\n", options={"quick": True},
                           environment=ENVIRONMENT, planned_cases=planned_cases)


def test_cases_come_back_whole(db_path: Path, measured_cases: list[CaseRecord]) -> None:
    failed = CaseRecord(params={"server": "nginx", "workers": 2}, error="nginx did not start: bind() failed",
                        config_text="worker_processes 2;\n", server_version="nginx/1.22.1", labels=["server-cpu-bound"])
    with Store.open(db_path) as store:
        run_id = new_run(store, len(measured_cases) + 1)
        case_ids = [store.add_case(run_id, record) for record in [*measured_cases, failed]]
    with Store.open(db_path, create=False) as store:
        stored = store.cases([run_id])
    assert [c.case_id for c in stored] == case_ids
    for record, case in zip([*measured_cases, failed], stored, strict=True):
        assert (case.key, case.repeat, case.params, case.status) == (record.key, record.repeat, record.params, record.status)
        assert (case.server_version, case.config_text, case.labels, case.error) == (
            record.server_version, record.config_text, record.labels, record.error)
        assert (case.started_unix_ms, case.ended_unix_ms) == (record.started_unix_ms, record.ended_unix_ms)
        assert case.result == record.result
        assert case.figures == ({} if record.result is None else figures_of(record.result))
    assert stored[-1].status == "error" and stored[-1].result is None


def test_the_flat_figures_are_read_from_each_part_of_the_result(measured_cases: list[CaseRecord]) -> None:
    closed, _, rate, tls, sessions = (record.result for record in measured_cases)
    assert closed is not None and rate is not None and tls is not None and sessions is not None
    figures = figures_of(closed)
    assert figures["requests_per_s"] == closed["requests_per_s"] > 0
    assert figures["latency_p99_us"] == closed["latency_us"]["p99"]
    assert figures["server_cpu_us_per_request"] == closed["server"]["cpu_us_per_request"] > 0
    assert figures["server_rss_bytes"] == sum(m["rss_bytes"] for m in closed["server"]["memory"].values()) > 0
    assert figures["offered_rate_per_s"] is None and figures["tls_handshakes"] is None
    assert figures_of(rate)["offered_rate_per_s"] == 2000
    assert figures_of(rate)["achieved_rate_per_s"] == rate["schedule"]["achieved_rate_per_s"]
    assert figures_of(tls)["tls_handshakes"] == tls["tls"]["handshakes"] == 2
    assert figures_of(sessions)["sessions_users_completed"] == sessions["sessions"]["users_completed"]
    assert figures_of(sessions)["qos_valid"] is True and figures_of(closed)["qos_valid"] is None


def test_schema_and_figures_agree(db_path: Path) -> None:
    Store.open(db_path).close()
    with sqlite3.connect(db_path) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(measurements)")]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # Migrations add figures after result_json (SQLite appends columns).
    assert [c for c in columns if c != "result_json"] == ["case_id", *FIGURES] and "result_json" in columns


def test_timelines_and_histograms_have_rows_of_their_own(db_path: Path, measured_cases: list[CaseRecord]) -> None:
    record = measured_cases[0]
    assert record.result is not None and len(record.result["timeline"]) >= 2
    with Store.open(db_path) as store:
        case_id = store.add_case(new_run(store), record)
    with sqlite3.connect(db_path) as conn:
        seconds = conn.execute("SELECT second, responses FROM timelines WHERE case_id = ? ORDER BY second", (case_id,)).fetchall()
        histograms = dict(conn.execute("SELECT name, encoded FROM histograms WHERE case_id = ?", (case_id,)).fetchall())
        stored_json = json.loads(conn.execute("SELECT result_json FROM measurements").fetchone()[0])
    assert seconds == [(s["second"], s["responses"]) for s in record.result["timeline"]]
    assert set(histograms) == {"latency", "service_time"}
    assert "timeline" not in stored_json and "histogram" not in stored_json
    # Any percentile can be recomputed from the stored histogram: the engine's own summary agrees.
    latency = record.result["latency_us"]
    assert engine.histogram_percentiles(histograms["latency"], [0.5, 0.99, 1.0]) == [latency["p50"], latency["p99"], latency["max"]]


def test_runs_end_resume_and_know_their_done_cases(
    db_path: Path, measured_cases: list[CaseRecord], builtin_server: ServerInstance, tmp_path: Path
) -> None:
    partial = interrupted_result(builtin_server, tmp_path)
    with Store.open(db_path) as store:
        run_id = new_run(store, planned_cases=3)
        store.add_case(run_id, measured_cases[0])
        store.add_case(run_id, CaseRecord(params={"server": "nginx"}, error="not installed"))
        store.add_case(run_id, CaseRecord(params={"server": "builtin", "connections": 4}, repeat=1, result=partial))
        store.end_run(run_id, "interrupted")
        assert store.run(run_id).status == "interrupted" and store.run(run_id).ended_unix_ms is not None
    with Store.open(db_path) as store:
        run = store.resume_run(run_id)
        assert (run.status, run.ended_unix_ms, run.suite_text) == ("running", None, "servers: [builtin]\n")
        assert run.options == {"quick": True}
        assert run.environment == ENVIRONMENT and run.planned_cases == 3 and run.stored_cases == 3
        # The partial case is measured again by a resume, and replaces the first attempt.
        assert store.done(run_id) == {(measured_cases[0].key, 0): None, ('{"server":"nginx"}', 0): None}
        again = CaseRecord(params={"server": "builtin", "connections": 4}, repeat=1, result=measured_cases[0].result)
        store.add_case(run_id, again)
        assert len(store.done(run_id)) == 3 and len(store.cases([run_id])) == 3
        sessions = measured_cases[-1]
        store.add_case(run_id, sessions)
        assert store.done(run_id)[(sessions.key, 0)] is True, "the stored QoS verdict, for a capacity search to resume"
        store.end_run(run_id, "complete")
        assert [(r.run_id, r.status) for r in store.runs()] == [(run_id, "complete")]
        with pytest.raises(ValueError, match="not one of"):
            store.end_run(run_id, "done")
        with pytest.raises(GauntletError, match=f"there is no run {run_id + 1} in"):
            store.resume_run(run_id + 1)


def interrupted_result(server: ServerInstance, tmp_path: Path) -> dict[str, object]:
    """A real partial result: `gauntlet run` cut short by Ctrl-C once the load has reached the server."""
    out = tmp_path / "partial.json"
    with Running("run", f"{server.url}webtest.html", "-d", "30s", "-c", "2", "--json", out, "--no-store") as running:
        deadline = time.monotonic() + 20
        while server_stats(server)["requests"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running.interrupt_and_wait(timeout_s=10).code == 130
    result: dict[str, object] = json.loads(out.read_text())
    assert result["partial"] is True
    return result


def test_migrations_are_numbered_in_order_and_recorded() -> None:
    numbers = [migration.number for migration in migrations()]
    # Each helper has its own number (helpers/contracts.md), so one may land before a lower one: a gap.
    assert numbers[0] == 1 and numbers == sorted(set(numbers)) and SCHEMA_VERSION == numbers[-1]


def test_a_database_from_a_newer_gauntlet_is_a_one_line_error(db_path: Path) -> None:
    Store.open(db_path).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(GauntletError, match="written by a newer Gauntlet"):
        Store.open(db_path)
    done = run_cli("report", "--db", db_path)
    assert done.code == 2
    assert done.stderr.startswith("gauntlet: error: ") and done.stderr.count("\n") == 1, done.stderr
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"this is no database, just text " * 200, "is not a Gauntlet results database"), (None, "there is no results database")],
)
def test_bad_database_files_are_one_line_errors(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "results.db"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(GauntletError, match=message):
        Store.open(path, create=False)
    done = run_cli("export", "1", "--db", path)
    assert done.code == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_a_missing_directory_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(GauntletError, match="does not exist"):
        Store.open(tmp_path / "no" / "such" / "results.db")


def test_a_database_of_the_first_schema_gains_the_session_columns(db_path: Path, measured_cases: list[CaseRecord]) -> None:
    """A case stored under schema 1 reads back after the migrations with zero session counters and no
    error kinds per second, and a new case beside it keeps its own."""
    with sqlite3.connect(db_path) as conn:
        conn.executescript(migrations()[0].sql)
        conn.execute("PRAGMA user_version = 1")
        conn.execute("INSERT INTO runs VALUES (1, 'old', NULL, '{}', '{}', 2, '0', 0, NULL, 'running')")
        conn.execute("INSERT INTO cases VALUES (1, 1, 'k', 0, '{}', 'ok', NULL, NULL, '[]', NULL, 0, 0)")
        conn.execute("INSERT INTO measurements (case_id, result_json) VALUES (1, '{}')")
        conn.execute("INSERT INTO timelines VALUES (1, 0, 1000000, 5, 5, 0, 100, 1, 2, 3, 4, NULL)")
    sessions = measured_cases[-1]
    with Store.open(db_path) as store:
        store.add_case(1, sessions)
        old, new = store.cases([1])
    assert old.result is not None and new.result is not None and sessions.result is not None
    assert old.result["timeline"][0] | {"errors_by_kind": {}} == old.result["timeline"][0]
    assert {old.result["timeline"][0][name] for name in ("users_arrived", "users_active", "pages")} == {0}
    assert new.result["timeline"] == sessions.result["timeline"]
    assert sum(s["pages"] for s in new.result["timeline"]) == sum(p["count"] for p in new.result["sessions"]["pages"].values())


def test_a_capacity_search_is_one_case_however_many_probes_it_stored(db_path: Path) -> None:
    from gauntlet.report.views import run_line

    search = {"server": "nginx", "model": "sessions", "capacity": True}
    with Store.open(db_path) as store:
        run_id = new_run(store, planned_cases=2)
        store.add_case(run_id, CaseRecord(params={"server": "nginx", "connections": 4}, error="not installed"))
        for users in (10, 20, 15):
            store.add_case(run_id, CaseRecord(params=search | {"users": users}, error="not installed"))
        run = store.run(run_id)
    assert (run.planned_cases, run.stored_cases, run.stored_probes) == (2, 2, 3)
    assert "2 of 2 cases stored (3 capacity probes)" in run_line(run)

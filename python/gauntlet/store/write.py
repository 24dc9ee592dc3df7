"""Write runs and cases. Each call is one transaction: a case is on disk, whole, when add_case returns."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from gauntlet import __version__
from gauntlet.model.record import CaseRecord
from gauntlet.store.db import transaction
from gauntlet.store.figures import FIGURES, figures_of

RUN_STATUSES = ("running", "complete", "interrupted", "failed")
#: Result fields kept in their own tables rather than in result_json: field -> histograms.name.
HISTOGRAM_FIELDS = {"histogram": "latency", "service_histogram": "service_time"}
TIMELINE_COLUMNS = (
    "second", "span_us", "requests", "responses", "errors", "bytes_in", "p50_us", "p90_us", "p99_us", "max_us", "histogram",
    "users_arrived", "users_active", "users_finished", "users_dropped", "pages", "page_errors",
)
#: Timeline fields kept as JSON text: field -> column.
TIMELINE_JSON_COLUMNS = {"errors_by_kind": "errors_by_kind_json"}


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def begin_run(
    conn: sqlite3.Connection,
    path: Path,
    *,
    command: str,
    suite: str,
    suite_text: str | None,
    options: dict[str, Any],
    environment: dict[str, Any],
    planned_cases: int,
    started_unix_ms: int | None = None,
) -> int:
    with transaction(conn, path, "start a run"):
        cursor = conn.execute(
            "INSERT INTO runs (command, suite, suite_text, options_json, environment_json, planned_cases, gauntlet_version,"
            " started_unix_ms, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running')",
            (command, suite, suite_text, _json(options), _json(environment), planned_cases, __version__,
             started_unix_ms or _now_ms()),
        )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def add_case(conn: sqlite3.Connection, path: Path, run_id: int, record: CaseRecord) -> int:
    """Store one case with its figures, timeline and histograms. A case stored before under the
    same (key, repeat) in this run (a partial one, measured again after a resume) is replaced."""
    with transaction(conn, path, "store a case"):
        conn.execute("DELETE FROM cases WHERE run_id = ? AND key = ? AND repeat = ?", (run_id, record.key, record.repeat))
        ran = what_ran(record.result)
        cursor = conn.execute(
            "INSERT INTO cases (run_id, key, repeat, params_json, status, server_version, config_text, labels_json,"
            " error, started_unix_ms, ended_unix_ms, breaches_json, " + ", ".join(ran) + ")"
            " VALUES (" + ", ".join("?" * (12 + len(ran))) + ")",
            (
                run_id, record.key, record.repeat, _json(record.params), record.status, record.server_version,
                record.config_text, _json(record.labels), record.error, record.started_unix_ms, record.ended_unix_ms,
                _json(record.breaches), *ran.values(),
            ),
        )
        case_id = cursor.lastrowid
        assert case_id is not None
        if record.result is not None:
            _add_result(conn, case_id, record.result)
    return case_id


def what_ran(result: dict[str, Any] | None) -> dict[str, Any]:
    """The cases columns that say what ran, from the result's `server_setup` (a server Gauntlet
    started) and the engine's `negotiated` (HTTPS): None where the result does not say."""
    setup = (result or {}).get("server_setup") or {}
    negotiated = (result or {}).get("negotiated") or {}
    return {
        "server_kind": setup.get("kind"),
        "server_workers": setup.get("workers"),
        "backend": setup.get("backend"),
        "config_sha256": setup.get("config_sha256"),
        "tls_version": negotiated.get("tls_version"),
        "tls_cipher": negotiated.get("tls_cipher"),
    }


def _add_result(conn: sqlite3.Connection, case_id: int, result: dict[str, Any]) -> None:
    rest = {k: v for k, v in result.items() if k != "timeline" and k not in HISTOGRAM_FIELDS}
    figures = figures_of(result)
    columns = ", ".join(FIGURES)
    marks = ", ".join("?" * (len(FIGURES) + 2))
    conn.execute(
        f"INSERT INTO measurements (case_id, {columns}, result_json) VALUES ({marks})",
        (case_id, *figures.values(), _json(rest)),
    )
    second_columns = [*TIMELINE_COLUMNS, *TIMELINE_JSON_COLUMNS.values()]
    conn.executemany(
        f"INSERT INTO timelines (case_id, {', '.join(second_columns)}) VALUES ({', '.join('?' * (len(second_columns) + 1))})",
        [
            (case_id, *(second[c] for c in TIMELINE_COLUMNS), *(_json(second[f]) for f in TIMELINE_JSON_COLUMNS))
            for second in result.get("timeline", [])
        ],
    )
    conn.executemany(
        "INSERT INTO histograms (case_id, name, encoded) VALUES (?, ?, ?)",
        [(case_id, name, result[field]) for field, name in HISTOGRAM_FIELDS.items() if result.get(field)],
    )


def end_run(conn: sqlite3.Connection, path: Path, run_id: int, status: str) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(f"run status {status!r} is not one of {RUN_STATUSES}")
    with transaction(conn, path, "end the run"):
        ended = None if status == "running" else _now_ms()
        conn.execute("UPDATE runs SET status = ?, ended_unix_ms = ? WHERE run_id = ?", (status, ended, run_id))


def _now_ms() -> int:
    return time.time_ns() // 1_000_000

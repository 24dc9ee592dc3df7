"""Read runs and cases back, each case with its figures and its whole result as it was written."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from gauntlet.errors import GauntletError
from gauntlet.store.figures import FIGURES, Figure
from gauntlet.store.write import HISTOGRAM_FIELDS, TIMELINE_COLUMNS, TIMELINE_JSON_COLUMNS


@dataclass(frozen=True)
class RunRow:
    run_id: int
    #: suite, run, sweep, capacity or calibrate.
    command: str
    #: The suite's name; for the other commands, the command's.
    suite: str
    suite_text: str | None
    options: dict[str, Any]
    environment: dict[str, Any]
    planned_cases: int
    gauntlet_version: str
    started_unix_ms: int
    ended_unix_ms: int | None
    status: str
    #: Cases stored so far, whatever their status; a capacity search is one, from its first probe.
    stored_cases: int
    #: Capacity probes stored so far (a suite's capacity searches store one case per probe).
    stored_probes: int


@dataclass(frozen=True)
class CaseRow:
    case_id: int
    run_id: int
    key: str
    repeat: int
    params: dict[str, Any]
    #: ok, partial or error (see gauntlet.model.record.CaseRecord.status).
    status: str
    server_version: str | None
    config_text: str | None
    #: What ran (migration 0005): the server kind, its workers, its backend, its config's SHA-256,
    #: the TLS version and cipher negotiated; None where unknown (an external URL, plain HTTP, older cases).
    server_kind: str | None
    server_workers: int | None
    backend: str | None
    config_sha256: str | None
    tls_version: str | None
    tls_cipher: str | None
    labels: list[str]
    #: The invariants its result broke (gauntlet.analysis.invariants).
    breaches: list[str]
    error: str | None
    started_unix_ms: int
    ended_unix_ms: int
    #: gauntlet.store.figures.FIGURES of the result; empty without a result.
    figures: dict[str, Figure]
    #: The run result as add_case received it (timeline and histograms included), or None.
    result: dict[str, Any] | None


#: A capacity search stores one case per probe, each its search's params and the level probed:
#: the search is one case, however many probes it stored.
RUN_QUERY = """
SELECT runs.*,
    (SELECT count(*) FROM cases WHERE cases.run_id = runs.run_id AND NOT {probe})
    + (SELECT count(DISTINCT json_remove(params_json, '$.users', '$.peak_users_per_s') || ' ' || repeat)
       FROM cases WHERE cases.run_id = runs.run_id AND {probe}) AS stored_cases,
    (SELECT count(*) FROM cases WHERE cases.run_id = runs.run_id AND {probe}) AS stored_probes
FROM runs
""".format(probe="coalesce(json_extract(params_json, '$.capacity'), 0) = 1")


def _columns(row: sqlite3.Row, row_type: type[RunRow | CaseRow], *given: str) -> dict[str, Any]:
    """The fields of `row_type` (but those `given` apart) from the row's columns of the same name,
    a column `NAME_json` parsed into the field NAME."""
    columns = set(row.keys())
    found: dict[str, Any] = {}
    for field in fields(row_type):
        if field.name in given:
            continue
        found[field.name] = json.loads(row[f"{field.name}_json"]) if f"{field.name}_json" in columns else row[field.name]
    return found


def _run_row(row: sqlite3.Row) -> RunRow:
    return RunRow(**_columns(row, RunRow))


def runs(conn: sqlite3.Connection) -> list[RunRow]:
    """Every run, oldest first."""
    return [_run_row(row) for row in conn.execute(RUN_QUERY + " ORDER BY run_id")]


@dataclass(frozen=True)
class CaseHeadline:
    """What `gauntlet report --list` shows of a case: its key and params, and requests/s (None
    without a result)."""

    key: str
    params: dict[str, Any]
    server_kind: str | None
    requests_per_s: float | None


def headlines(conn: sqlite3.Connection) -> dict[int, list[CaseHeadline]]:
    """Every run's cases, by run id, without their results (cheap on a large store)."""
    found: dict[int, list[CaseHeadline]] = defaultdict(list)
    rows = conn.execute(
        "SELECT run_id, key, params_json, server_kind, requests_per_s FROM cases LEFT JOIN measurements USING (case_id)"
        " ORDER BY case_id"
    )
    for row in rows:
        found[row["run_id"]].append(
            CaseHeadline(row["key"], json.loads(row["params_json"]), row["server_kind"], row["requests_per_s"])
        )
    return found


def run(conn: sqlite3.Connection, path: Path, run_id: int) -> RunRow:
    row = conn.execute(RUN_QUERY + " WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        raise GauntletError(
            f"there is no run {run_id} in {str(path)!r}", "`gauntlet report --list` lists the runs it holds"
        )
    return _run_row(row)


def latest_run_id(conn: sqlite3.Connection, path: Path) -> int:
    row = conn.execute("SELECT max(run_id) FROM runs").fetchone()
    if row[0] is None:
        raise GauntletError(f"{str(path)!r} holds no run yet", "Run a suite first (gauntlet suite run quick)")
    return int(row[0])


def done(conn: sqlite3.Connection, run_id: int) -> dict[tuple[str, int], bool | None]:
    """The cases a resume need not measure again (all but the partial ones), by (key, repeat), with
    their QoS verdict when the suite gave one (sessions), else None."""
    rows = conn.execute(
        "SELECT key, repeat, qos_valid FROM cases LEFT JOIN measurements USING (case_id)"
        " WHERE run_id = ? AND status != 'partial'",
        (run_id,),
    )
    return {(row["key"], row["repeat"]): None if row["qos_valid"] is None else bool(row["qos_valid"]) for row in rows}


def cases(conn: sqlite3.Connection, run_ids: list[int]) -> list[CaseRow]:
    """The runs' cases in the order they were stored, results put back together."""
    marks = ", ".join("?" * len(run_ids))
    figures = ", ".join(f"measurements.{name}" for name in FIGURES)
    rows = conn.execute(
        f"SELECT cases.*, {figures}, measurements.result_json FROM cases LEFT JOIN measurements USING (case_id)"
        f" WHERE run_id IN ({marks}) ORDER BY case_id",
        run_ids,
    ).fetchall()
    timelines = _timelines(conn, marks, run_ids)
    histograms = _histograms(conn, marks, run_ids)
    return [_case_row(row, timelines[row["case_id"]], histograms[row["case_id"]]) for row in rows]


def _case_row(row: sqlite3.Row, timeline: list[dict[str, Any]], histograms: dict[str, str]) -> CaseRow:
    result = None
    if row["result_json"] is not None:
        result = json.loads(row["result_json"])
        result["timeline"] = timeline
        for field, name in HISTOGRAM_FIELDS.items():
            if name in histograms:
                result[field] = histograms[name]
    figures = {} if result is None else {name: row[name] for name in FIGURES}
    return CaseRow(**_columns(row, CaseRow, "figures", "result"), figures=figures, result=result)


def _timelines(conn: sqlite3.Connection, marks: str, run_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = conn.execute(
        f"SELECT timelines.* FROM timelines JOIN cases USING (case_id) WHERE run_id IN ({marks})"
        " ORDER BY case_id, second",
        run_ids,
    )
    for row in rows:
        second = {name: row[name] for name in TIMELINE_COLUMNS}
        second.update({field: json.loads(row[column]) for field, column in TIMELINE_JSON_COLUMNS.items()})
        found[row["case_id"]].append(second)
    return found


def _histograms(conn: sqlite3.Connection, marks: str, run_ids: list[int]) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = defaultdict(dict)
    rows = conn.execute(
        f"SELECT histograms.* FROM histograms JOIN cases USING (case_id) WHERE run_id IN ({marks})", run_ids
    )
    for row in rows:
        found[row["case_id"]][row["name"]] = row["encoded"]
    return found

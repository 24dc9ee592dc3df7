"""The finished cases in the report's verdict-first form: each group of comparable cases ranked with
its headline (report.verdicts), then the cases table (report.views), built from the records in
memory as the store would read them back, so a run kept out of the store (--no-store) shows too."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from gauntlet.model.record import CaseRecord
from gauntlet.report.points import grid_points
from gauntlet.report.verdicts import verdict_views
from gauntlet.report.views import Table, cases_table
from gauntlet.store import CaseRow
from gauntlet.store.figures import figures_of
from gauntlet.store.write import what_ran


def case_row(record: CaseRecord, run_id: int, case_id: int) -> CaseRow:
    """The record as the store's read side hands it back (store.read.cases)."""
    return CaseRow(
        case_id=case_id, run_id=run_id, key=record.key, repeat=record.repeat, params=record.params, status=record.status,
        server_version=record.server_version, config_text=record.config_text, **what_ran(record.result),
        labels=list(record.labels), breaches=record.breaches, error=record.error, started_unix_ms=record.started_unix_ms,
        ended_unix_ms=record.ended_unix_ms, figures={} if record.result is None else figures_of(record.result),
        result=record.result,
    )


def _table_json(table: Table) -> dict[str, Any]:
    found = asdict(table)
    found["columns"] = [{"name": c.name, "numeric": c.numeric} for c in table.columns]
    return found


def finished_tables(records: list[CaseRecord], run_id: int | None) -> list[dict[str, Any]]:
    """The verdicts (each with its bars' shares), then the cases table; empty before any case ends."""
    points = grid_points([case_row(record, run_id or 0, index) for index, record in enumerate(records)])
    if not points:
        return []
    verdicts = [_table_json(view.table) | {"headline": view.headline, "shares": view.shares} for view in verdict_views(points)]
    return [*verdicts, _table_json(cases_table(points))]

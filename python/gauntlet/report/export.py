"""Runs and cases out of the store: JSON (everything, results whole), CSV and the DataFrame API
(one flat row per case)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from typing import Any

from gauntlet.report.points import param_sort_key
from gauntlet.store import CaseRow, RunRow
from gauntlet.store.figures import FIGURES

EXPORT_SCHEMA = "gauntlet.export/1"
#: A case's own columns in flat rows, before its parameters and its figures.
CASE_COLUMNS = (
    "run_id", "case_id", "key", "repeat", "status", "server_version", "labels", "breaches", "error", "started_unix_ms",
    "ended_unix_ms",
)
#: Prefix of a parameter whose name is already a case column or a figure.
TAKEN_PREFIX = "param_"


def to_json(runs: list[RunRow], cases: list[CaseRow]) -> str:
    """The runs and their cases as stored: parameters, figures and the whole result of each."""
    return json.dumps({"schema": EXPORT_SCHEMA, "runs": [asdict(r) for r in runs], "cases": [asdict(c) for c in cases]}, indent=1)


def param_columns(cases: list[CaseRow]) -> dict[str, str]:
    """Parameter name -> its column, for every parameter any case has."""
    names = sorted({n for case in cases for n in case.params}, key=param_sort_key)
    taken = {*CASE_COLUMNS, *FIGURES}
    return {name: TAKEN_PREFIX + name if name in taken else name for name in names}


def flat_rows(cases: list[CaseRow]) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, one row per case): its own columns, its parameters, its figures (None where absent)."""
    params = param_columns(cases)
    columns = [*CASE_COLUMNS, *params.values(), *FIGURES]
    rows = []
    for case in cases:
        row: dict[str, Any] = {name: getattr(case, name) for name in CASE_COLUMNS}
        row.update({column: case.params.get(name) for name, column in params.items()})
        row.update({name: case.figures.get(name) for name in FIGURES})
        rows.append(row)
    return columns, rows


def to_csv(cases: list[CaseRow]) -> str:
    """The flat rows; labels and breaches joined with '; ', absent values empty."""
    columns, rows = flat_rows(cases)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "labels": "; ".join(row["labels"]), "breaches": "; ".join(row["breaches"])})
    return out.getvalue()

"""`gauntlet export RUN --format json|csv [-o FILE]`: a run's cases out of the store."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, run_id


class ExportFormat(enum.StrEnum):
    json = "json"
    csv = "csv"


def export_command(
    run: Annotated[int, run_id("RUN", "The run to export")],
    export_format: Annotated[
        ExportFormat, typer.Option("--format", help="json: everything; csv: one row per case")
    ] = ExportFormat.json,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The file to write; default: stdout")] = None,
    db: DbOption = DEFAULT_DB_PATH,
) -> int:
    """Write a run's cases as JSON (runs, parameters, figures, whole results) or CSV (flat figures)."""
    from gauntlet.report.export import to_csv, to_json
    from gauntlet.report.output import write_atomically
    from gauntlet.store import Store

    with Store.open_read_only(db) as store:
        run_row = store.run(run)
        cases = store.cases([run])
    text = to_json([run_row], cases) + "\n" if export_format is ExportFormat.json else to_csv(cases)
    if output is None:
        sys.stdout.write(text)
    else:
        write_atomically(output, text)
    return 0

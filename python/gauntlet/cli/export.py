"""`gauntlet export RUN --format json|csv [-o FILE]`: a run's cases out of the store."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, run_id
from gauntlet.errors import GauntletError

if TYPE_CHECKING:
    from gauntlet.store.read import CaseRow


class ExportFormat(enum.StrEnum):
    json = "json"
    csv = "csv"


def export_command(
    run: Annotated[int, run_id("RUN", "The run to export")],
    export_format: Annotated[
        ExportFormat, typer.Option("--format", help="json: everything; csv: one row per case")
    ] = ExportFormat.json,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="The file to write; default: stdout")] = None,
    hgrm: Annotated[
        Path | None,
        typer.Option("--hgrm", help="Instead: each case's latency histogram as DIR/CASE.hgrm (HdrHistogram's percentile text, as wrk2 prints it)"),
    ] = None,
    db: DbOption = DEFAULT_DB_PATH,
) -> int:
    """Write a run's cases as JSON (runs, parameters, figures, whole results) or CSV (flat figures),
    or each case's latency histogram as an .hgrm file (--hgrm)."""
    from gauntlet.report.export import to_csv, to_json
    from gauntlet.report.output import write_atomically
    from gauntlet.store import Store

    with Store.open_read_only(db) as store:
        run_row = store.run(run)
        cases = store.cases([run])
    if hgrm is not None:
        if output is not None:
            raise GauntletError("--hgrm writes a directory of files and -o one file", "Give one of them")
        return export_hgrm(hgrm, cases)
    text = to_json([run_row], cases) + "\n" if export_format is ExportFormat.json else to_csv(cases)
    if output is None:
        sys.stdout.write(text)
    else:
        write_atomically(output, text)
    return 0


def export_hgrm(directory: Path, cases: list[CaseRow]) -> int:
    """Each case with a result as DIR/CASE.hgrm; says on stderr how many, and which cases had none."""
    from gauntlet.report.hgrm import write_distributions

    measured = [(case.params, case.repeat, case.result["histogram"]) for case in cases if case.result is not None]
    written = write_distributions(directory, measured)
    skipped = len(cases) - len(measured)
    left_out = f"; {skipped} case(s) without a result left out" if skipped else ""
    print(f"gauntlet: wrote {len(written)} .hgrm file(s) to {directory}{left_out}", file=sys.stderr)
    return 0

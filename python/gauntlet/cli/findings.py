"""`gauntlet findings RUN`: the study's claims judged against a stored suite run."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.text import Text

from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, run_id
from gauntlet.report.output import console


def findings_command(
    run: Annotated[int, run_id("RUN", "A stored run of a study suite")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdicts as JSON")] = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a Markdown page: the command, the date, the machine, the table (docs/findings/)")
    ] = False,
    db: DbOption = DEFAULT_DB_PATH,
) -> int:
    """Each claim of the study's paper, the paper's figure, the measured value with its interval, and
    the verdict: holds, does not hold, inconclusive, not measured (and why)."""
    from gauntlet.errors import GauntletError
    from gauntlet.report.findings import findings_json, findings_markdown, findings_table, judged_run, tally
    from gauntlet.report.tables import rich_table
    from gauntlet.store import Store

    with Store.open_read_only(db) as store:
        run_row = store.run(run)
        if run_row.command != "suite":
            raise GauntletError(
                f"run {run} is a `gauntlet {run_row.command}`, not a study suite",
                "Give the id of a `gauntlet suite run` (gauntlet report --list shows them)",
            )
        floors = store.noise_floors()
        judged, origin = judged_run(run_row, store.cases([run]), floors, store.done(run))
    out = console()
    if as_json:
        out.print_json(json.dumps(findings_json(judged, origin)))
        return 0
    if as_markdown:
        print(findings_markdown(run_row, judged, origin, floors))
        return 0
    out.print(rich_table(findings_table(judged, origin)))
    out.print(Text(f"run {run}, {run_row.suite}: {tally(judged)}"), soft_wrap=True)
    return 0

"""`gauntlet report [RUN...]`: the terminal summary and the self-contained HTML report of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, run_id
from gauntlet.report.output import console

DEFAULT_REPORT_PATH = Path("report.html")


def report_command(
    runs: Annotated[list[int] | None, run_id("RUNS", "Run ids; default: the latest run")] = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write")] = DEFAULT_REPORT_PATH,
    db: DbOption = DEFAULT_DB_PATH,
    list_runs: Annotated[bool, typer.Option("--list", help="List the database's runs instead")] = False,
) -> int:
    """Summarise runs from the results database and write their HTML report (opens offline)."""
    from gauntlet.report.html import write_report
    from gauntlet.report.tables import print_summary, rich_table
    from gauntlet.report.views import runs_table
    from gauntlet.store import Store

    out = console()
    with Store.open_read_only(db) as store:
        if list_runs:
            out.print(rich_table(runs_table(store.runs(), store.headlines())))
            return 0
        run_ids = runs or [store.latest_run_id()]
        print_summary(out, store, *run_ids)
        write_report(store, run_ids, output)
    console(stderr=True).print(Text(f"report: {output}"))
    return 0

"""`gauntlet compare RUN_A RUN_B`: case by case, the changes from a baseline run; exit 1 on a regression (CI)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption
from gauntlet.report.output import console

EXIT_REGRESSION = 1
#: Changed lines of the suite files named in the warning; the rest are counted.
SUITE_LINES_SHOWN = 6


def compare_command(
    run_a: Annotated[int, typer.Argument(help="The baseline run")],
    run_b: Annotated[int, typer.Argument(help="The run compared with it")],
    threshold: Annotated[
        float, typer.Option("--threshold", min=0, help="Exit 1 only for a regression larger than PCT percent (points for shares)")
    ] = 0.0,
    db: DbOption = DEFAULT_DB_PATH,
) -> int:
    """Compare requests/s, p99, CPU per request, the failed share and each error kind; regressions count
    only beyond the runs' own spread."""
    from gauntlet.report.compare import compare, comparison_table, failing, suite_differences
    from gauntlet.report.tables import rich_table
    from gauntlet.store import Store

    out, err = console(), console(stderr=True)
    with Store.open(db, create=False) as store:
        before, after = store.run(run_a), store.run(run_b)
        comparison = compare(store.cases([run_a]), store.cases([run_b]), before.environment, after.environment)
    if comparison.setting_differences:
        err.print(Text(
            f"warning: the runs differ in a setting of every case ({'; '.join(comparison.setting_differences)}); "
            "cases are paired across it, and their changes may come from it",
            style="yellow",
        ), soft_wrap=True)
    changed_lines = suite_differences(before.suite_text, after.suite_text)
    if changed_lines:
        shown = " | ".join(line.strip() for line in changed_lines[:SUITE_LINES_SHOWN])
        more = f" and {len(changed_lines) - SUITE_LINES_SHOWN} more" if len(changed_lines) > SUITE_LINES_SHOWN else ""
        err.print(Text(f"warning: the runs' suite files differ ({shown}{more})", style="yellow"), soft_wrap=True)
    if comparison.environment_differences:
        err.print(Text(
            f"warning: the runs' environments differ ({'; '.join(comparison.environment_differences)}); "
            "changes may come from the machine, not the server",
            style="yellow",
        ), soft_wrap=True)
    out.print(rich_table(comparison_table(comparison)))
    for points, which in ((comparison.only_before, f"run {run_a}"), (comparison.only_after, f"run {run_b}")):
        if points:
            out.print(Text(f"{len(points)} cases only in {which}: not compared"), soft_wrap=True)
    regressions = comparison.regressions()
    over = failing(comparison, threshold)
    out.print(Text(
        f"{len(comparison.cases)} cases compared; {len(regressions)} regressions beyond the runs' spread, "
        f"{len(over)} larger than {threshold:g} %"
    ), soft_wrap=True)
    return EXIT_REGRESSION if over else 0

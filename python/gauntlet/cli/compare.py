"""`gauntlet compare RUN_A RUN_B`: case by case, the changes from a baseline run; exit 1 on a regression (CI)."""

from __future__ import annotations

from typing import Annotated

from rich.text import Text

from gauntlet.bounds import THRESHOLD
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, bounded, run_id
from gauntlet.report.output import console

EXIT_REGRESSION = 1


def compare_command(
    run_a: Annotated[int, run_id("RUN_A", "The baseline run")],
    run_b: Annotated[int, run_id("RUN_B", "The run compared with it")],
    threshold: Annotated[
        float, bounded(THRESHOLD, "--threshold", help="Exit 1 only for a regression larger than PCT percent (points for shares)")
    ] = 0.0,
    db: DbOption = DEFAULT_DB_PATH,
) -> int:
    """Compare requests/s, p99, CPU per request, the failed share and each error kind; regressions count
    only beyond the runs' own spread."""
    from gauntlet.report.compare import compare, comparison_table, failing, warnings
    from gauntlet.report.tables import rich_table
    from gauntlet.store import Store

    out, err = console(), console(stderr=True)
    with Store.open(db, create=False) as store:
        before, after = store.run(run_a), store.run(run_b)
        comparison = compare(store.cases([run_a]), store.cases([run_b]), before.environment, after.environment)
    for line in warnings(comparison, before.suite_text, after.suite_text):
        err.print(Text(f"warning: {line}", style="yellow"), soft_wrap=True)
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

"""`gauntlet compare RUN_A RUN_B`: case by case, each figure's verdict against a baseline run; exit 1
on a detected regression (CI)."""

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
    """Compare requests/s, p50, p99, CPU per request, the failed share and each error kind; a change
    counts only when its 95 % interval excludes 0 and it exceeds this machine's noise floor."""
    from gauntlet.analysis.verdict import NOT_MEASURED
    from gauntlet.report.compare import compare, comparison_table, failing, side_name, warnings
    from gauntlet.report.tables import rich_table
    from gauntlet.store import Store

    out, err = console(), console(stderr=True)
    with Store.open_read_only(db) as store:
        before, after = store.run(run_a), store.run(run_b)
        cases_before, cases_after = store.cases([run_a]), store.cases([run_b])
        kinds = {c.server_kind or c.params.get("server") for c in [*cases_before, *cases_after]}
        floors = store.noise_floors(kinds.pop() if len(kinds) == 1 else None)
    comparison = compare(cases_before, cases_after, before.environment, after.environment, floors)
    for line in warnings(comparison, before.suite_text, after.suite_text):
        err.print(Text(f"warning: {line}", style="yellow"), soft_wrap=True)
    names = side_name(before, cases_before), side_name(after, cases_after)
    out.print(Text(f"baseline {names[0]}\nnew      {names[1]}"), soft_wrap=True)
    out.print(rich_table(comparison_table(comparison, f"run {run_a}", f"run {run_b}")))
    for points, which in ((comparison.only_before, f"run {run_a}"), (comparison.only_after, f"run {run_b}")):
        if points:
            out.print(Text(f"{len(points)} cases only in {which}: not compared"), soft_wrap=True)
    unmeasured = comparison.unmeasured_floors()
    if unmeasured:
        out.print(Text(f"{NOT_MEASURED} (default floors used for {', '.join(unmeasured)})", style="yellow"), soft_wrap=True)
    regressions = comparison.regressions()
    over = failing(comparison, threshold)
    limit = f", {len(over)} larger than {threshold:g} %" if threshold else ""
    out.print(Text(
        f"{len(comparison.cases)} cases compared; {len(regressions)} regressions detected{limit}, "
        f"{len(comparison.improvements())} improvements; every other change is within the noise"
    ), soft_wrap=True)
    return EXIT_REGRESSION if over else 0

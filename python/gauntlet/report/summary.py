"""The terminal summary of runs from the store: the report's headline tables, in rich."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from gauntlet.report.points import grid_points
from gauntlet.report.views import SUMMARY_TABLES, Table, run_line, tables
from gauntlet.store import Store


def rich_table(table: Table) -> RichTable:
    """Cells as Text, so that no stored string is read as rich markup."""
    shown = RichTable(title=table.title, title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    for column in table.columns:
        shown.add_column(column.name, justify="right" if column.numeric else "left", overflow="fold")
    for row in table.rows:
        shown.add_row(*(Text(cell) for cell in row))
    return shown


def print_summary(console: Console, store: Store, run_ids: list[int]) -> None:
    """What the runs measured, as the HTML report's headline shows it; the lead prints it after a suite."""
    for run_id in run_ids:
        console.print(Text(run_line(store.run(run_id))))
    points = grid_points(store.cases(run_ids), by_run=len(run_ids) > 1)
    if not points:
        console.print("no case stored yet")
        return
    for table in tables(points, SUMMARY_TABLES):
        console.print(rich_table(table))

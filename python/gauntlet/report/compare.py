"""Run against run, case by case: what changed, and which changes are regressions beyond the noise.

A change counts as a regression only when it goes the bad way by more than the runs' own spread:
the larger relative range (max - min) / mean of the two runs' repeats of that case, or, when
neither run repeated it, DEFAULT_NOISE (report.points.noise). A change within it is said to be
inside the spread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from gauntlet.host import differences
from gauntlet.report.points import GridPoint, Spread, grid_points, noise
from gauntlet.report.views import Column, Table, case_cells, format_per_request
from gauntlet.store import CaseRow
from gauntlet.units import format_count, format_duration_us


class Compared(NamedTuple):
    heading: str
    higher_is_better: bool
    show: Callable[[float], str]


#: The figures compared, as the table shows them.
COMPARED = {
    "requests_per_s": Compared("requests/s", True, format_count),
    "latency_p99_us": Compared("p99", False, format_duration_us),
    "client_cpu_us_per_request": Compared("client µs/req", False, format_per_request),
    "server_cpu_us_per_request": Compared("server µs/req", False, format_per_request),
}


@dataclass(frozen=True)
class Change:
    figure: str
    before: Spread
    after: Spread
    #: (after - before) / before, of the means.
    change: float
    #: The relative change it had to exceed to count.
    noise: float

    @property
    def worse(self) -> bool:
        return self.change < 0 if COMPARED[self.figure].higher_is_better else self.change > 0

    @property
    def regression(self) -> bool:
        return self.worse and abs(self.change) > self.noise


@dataclass(frozen=True)
class CaseChange:
    before: GridPoint
    after: GridPoint
    changes: list[Change]


@dataclass(frozen=True)
class Comparison:
    cases: list[CaseChange]
    #: Keys measured in only one of the runs.
    only_before: list[GridPoint]
    only_after: list[GridPoint]
    #: Environment entries (dotted keys) that differ or exist in one run only.
    environment_differences: list[str]

    def regressions(self) -> list[tuple[CaseChange, Change]]:
        return [(case, change) for case in self.cases for change in case.changes if change.regression]


def change(figure: str, before: Spread | None, after: Spread | None) -> Change | None:
    """None when either run lacks the figure or the baseline is 0 (no relative change exists)."""
    if before is None or after is None or before.mean == 0:
        return None
    return Change(figure, before, after, (after.mean - before.mean) / before.mean, noise(before, after))


def compare(
    before: list[CaseRow], after: list[CaseRow], environment_before: dict[str, Any], environment_after: dict[str, Any]
) -> Comparison:
    points_before = {p.key: p for p in grid_points(before)}
    points_after = {p.key: p for p in grid_points(after)}
    cases = []
    for key, old in points_before.items():
        new = points_after.get(key)
        if new is not None:
            found = [change(figure, old.figure(figure), new.figure(figure)) for figure in COMPARED]
            cases.append(CaseChange(old, new, [c for c in found if c is not None]))
    return Comparison(
        cases=cases,
        only_before=[p for k, p in points_before.items() if k not in points_after],
        only_after=[p for k, p in points_after.items() if k not in points_before],
        environment_differences=differences(environment_before, environment_after),
    )


def failing(comparison: Comparison, threshold_pct: float) -> list[tuple[CaseChange, Change]]:
    """The regressions that also exceed the CI threshold (a share in percent; 0: any regression)."""
    return [(case, c) for case, c in comparison.regressions() if abs(c.change) * 100 > threshold_pct]


def verdict(c: Change) -> str:
    if c.regression:
        return "REGRESSION"
    return "inside the spread" if abs(c.change) <= c.noise else "better"


def comparison_table(comparison: Comparison) -> Table:
    """One row per case and compared figure: baseline, new, the change, the spread it had to exceed,
    and REGRESSION when it did (so CI logs can be searched for it)."""
    leading, named = case_cells([case.after for case in comparison.cases])
    rows = []
    for case, cells in zip(comparison.cases, named, strict=True):
        for c in case.changes:
            compared = COMPARED[c.figure]
            rows.append([
                *cells, compared.heading, compared.show(c.before.mean), compared.show(c.after.mean), f"{c.change:+.0%}",
                f"{c.noise:.0%}", verdict(c),
            ])
    columns = (
        *leading, Column("figure", False), Column("baseline"), Column("new"), Column("change"), Column("spread"),
        Column("", False),
    )
    note = (
        "Means over each run's repeats; spread: the change a regression must exceed. A change no larger "
        "than the spread is inside it: the two runs cannot be told apart on that figure."
    )
    return Table("comparison", "Comparison", note, columns, rows)

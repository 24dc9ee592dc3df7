"""Run against run, case by case: what changed, and which changes are regressions beyond the noise.

A change counts as a regression only when it goes the bad way by more than the runs' own spread:
the larger relative range (max - min) / mean of the two runs' repeats of that case, or, when
neither run repeated it, DEFAULT_NOISE (report.points.noise). A change within it is said to be
inside the spread. Shares (failed requests, each error kind, non-2xx responses) change in points,
not relative to a baseline that is often 0: their spread is the larger range (max - min) of the
repeats, at least DEFAULT_SHARE_NOISE.

Cases pair by key. A parameter that has one value throughout each run but a different one in each
(the suite's timeout changed from 15 s to 1 s) is a setting of the runs, not of a case: cases pair
without it, and the comparison names it. What the connections speak (http or https, the HTTP
version, HTTP/2's streams per connection) is never such a setting: an HTTP/2 run with 10 streams a
connection and one with 1, or an HTTP/1.1 one, measure different cases, which do not pair.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from gauntlet.host import differences
from gauntlet.model.record import case_key
from gauntlet.report.points import CaseValue, GridPoint, Spread, describe, grid_points, kind_share, noise, stored_figure
from gauntlet.report.views import Column, Table, case_cells, format_per_request
from gauntlet.store import CaseRow
from gauntlet.store.figures import ERROR_KINDS
from gauntlet.units import format_count, format_duration_us

#: The change in points a share must exceed when neither run repeated the case: a run that fails
#: 1 request in 100 more often than its baseline is flagged; a few stray errors are not.
DEFAULT_SHARE_NOISE = 0.01


class Compared(NamedTuple):
    heading: str
    higher_is_better: bool
    show: Callable[[float], str]
    #: The case's value; None: the stored figure of that name.
    value: CaseValue | None = None
    #: A share (0..1) compared in points rather than relative to the baseline.
    share: bool = False
    #: Compared only where some repeat of either run has it above 0.
    only_when_seen: bool = False


def _percent(share: float) -> str:
    return f"{share:.1%}"


#: Parameters that tell what the connections speak: a run-wide difference in one leaves the cases
#: unpaired instead of being a setting of the runs.
PROTOCOL_PARAMS = ("protocol", "http_version", "streams")

#: The figures compared, as the table shows them.
COMPARED = {
    "requests_per_s": Compared("requests/s", True, format_count),
    "latency_p99_us": Compared("p99", False, format_duration_us),
    "client_cpu_us_per_request": Compared("client µs/req", False, format_per_request),
    "server_cpu_us_per_request": Compared("server µs/req", False, format_per_request),
    "failed_share": Compared("failed", False, _percent, share=True),
    **{
        f"errors_{kind}": Compared(f"{kind.replace('_', ' ')} errors", False, _percent, kind_share(kind), True, True)
        for kind in ERROR_KINDS
    },
    "non_2xx_share": Compared("non-2xx", False, _percent, share=True, only_when_seen=True),
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
    def share(self) -> bool:
        return COMPARED[self.figure].share

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
    #: Parameters with one value in each run, different between them ('timeout_s: 15 -> 1'):
    #: cases were paired without them.
    setting_differences: list[str]
    #: The same for what the connections speak (PROTOCOL_PARAMS): cases were not paired across them.
    protocol_differences: list[str]

    def regressions(self) -> list[tuple[CaseChange, Change]]:
        return [(case, change) for case in self.cases for change in case.changes if change.regression]


def change(figure: str, before: Spread | None, after: Spread | None) -> Change | None:
    """None when either run lacks the figure, or the baseline is 0 for a relative figure (no relative
    change exists)."""
    if before is None or after is None:
        return None
    if COMPARED[figure].share:
        spreads = [s.high - s.low for s in (before, after) if s.n > 1]
        return Change(figure, before, after, after.mean - before.mean, max([DEFAULT_SHARE_NOISE, *spreads]))
    if before.mean == 0:
        return None
    return Change(figure, before, after, (after.mean - before.mean) / before.mean, noise(before, after))


def _changes(old: GridPoint, new: GridPoint) -> list[Change]:
    found = []
    for figure, compared in COMPARED.items():
        value = compared.value or stored_figure(figure)
        before, after = old.value(value), new.value(value)
        if compared.only_when_seen and not any(s is not None and s.high > 0 for s in (before, after)):
            continue
        if (c := change(figure, before, after)) is not None:
            found.append(c)
    return found


def run_settings(points: list[GridPoint]) -> dict[str, str]:
    """Parameter -> its value in words, for the parameters that have one value across the run."""
    names = {name for point in points for name in point.params}
    settings = {}
    for name in names:
        values = {repr(point.params.get(name)) for point in points}
        if len(values) == 1:
            value = points[0].params.get(name)
            settings[name] = "not set" if value is None else describe({name: value}, [name])
    return settings


def compare(
    before: list[CaseRow], after: list[CaseRow], environment_before: dict[str, Any], environment_after: dict[str, Any]
) -> Comparison:
    old_points, new_points = grid_points(before), grid_points(after)
    old_settings, new_settings = run_settings(old_points), run_settings(new_points)
    differing = sorted(n for n in old_settings.keys() | new_settings.keys() if old_settings.get(n) != new_settings.get(n))
    protocol = [n for n in differing if n in PROTOCOL_PARAMS]
    changed = [n for n in differing if n not in PROTOCOL_PARAMS and n in old_settings and n in new_settings]

    def paired_key(point: GridPoint) -> str:
        return case_key({k: v for k, v in point.params.items() if k not in changed})

    points_before = {paired_key(p): p for p in old_points}
    points_after = {paired_key(p): p for p in new_points}
    cases = [CaseChange(old, points_after[key], _changes(old, points_after[key]))
             for key, old in points_before.items() if key in points_after]
    return Comparison(
        cases=cases,
        only_before=[p for k, p in points_before.items() if k not in points_after],
        only_after=[p for k, p in points_after.items() if k not in points_before],
        environment_differences=differences(environment_before, environment_after),
        setting_differences=[f"{name}: {old_settings[name]} -> {new_settings[name]}" for name in changed],
        protocol_differences=[
            f"{name}: {old_settings.get(name, 'not set')} -> {new_settings.get(name, 'not set')}" for name in protocol
        ],
    )


def suite_differences(before: str | None, after: str | None) -> list[str]:
    """The lines of the suite file that one run had and the other did not ('-  timeout: 15s')."""
    if before is None or after is None:
        return []
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()]


#: Changed lines of the suite files named in the warning; the rest are counted.
SUITE_LINES_SHOWN = 6


def warnings(comparison: Comparison, suite_before: str | None, suite_after: str | None) -> list[str]:
    """What differs between the two runs besides the servers, each in a line: the changes may come from it."""
    found = []
    if comparison.protocol_differences:
        found.append(
            f"the runs speak differently in every case ({'; '.join(comparison.protocol_differences)}); "
            "such cases measure different things and are not paired"
        )
    if comparison.setting_differences:
        found.append(
            f"the runs differ in a setting of every case ({'; '.join(comparison.setting_differences)}); "
            "cases are paired across it, and their changes may come from it"
        )
    changed = suite_differences(suite_before, suite_after)
    if changed:
        more = f" and {len(changed) - SUITE_LINES_SHOWN} more" if len(changed) > SUITE_LINES_SHOWN else ""
        found.append(f"the runs' suite files differ ({' | '.join(changed[:SUITE_LINES_SHOWN])}{more})")
    if comparison.environment_differences:
        found.append(
            f"the runs' environments differ ({'; '.join(comparison.environment_differences)}); "
            "changes may come from the machine, not the server"
        )
    return found


def failing(comparison: Comparison, threshold_pct: float) -> list[tuple[CaseChange, Change]]:
    """The regressions that also exceed the CI threshold (a share in percent; 0: any regression)."""
    return [(case, c) for case, c in comparison.regressions() if abs(c.change) * 100 > threshold_pct]


def verdict(c: Change) -> str:
    if c.regression:
        return "REGRESSION"
    return "inside the spread" if abs(c.change) <= c.noise else "better"


def _change_text(c: Change) -> tuple[str, str]:
    """(the change, the spread it had to exceed) as the table shows them."""
    if c.share:
        return f"{100 * c.change:+.1f} pts", f"{100 * c.noise:.1f} pts"
    return f"{c.change:+.0%}", f"{c.noise:.0%}"


def comparison_table(comparison: Comparison) -> Table:
    """One row per case and compared figure: baseline, new, the change, the spread it had to exceed,
    and REGRESSION when it did (so CI logs can be searched for it)."""
    leading, named = case_cells([case.after for case in comparison.cases])
    rows = []
    for case, cells in zip(comparison.cases, named, strict=True):
        for c in case.changes:
            compared = COMPARED[c.figure]
            rows.append([
                *cells, compared.heading, compared.show(c.before.mean), compared.show(c.after.mean), *_change_text(c),
                verdict(c),
            ])
    columns = (
        *leading, Column("figure", False), Column("baseline"), Column("new"), Column("change"), Column("spread"),
        Column("", False),
    )
    note = (
        "Means over each run's repeats; spread: the change a regression must exceed. A change no larger "
        "than the spread is inside it: the two runs cannot be told apart on that figure. Shares (failed, each "
        "error kind, non-2xx) change in points (pts) of all requests."
    )
    return Table("comparison", "Comparison", note, columns, rows)

"""Run against run, case by case: each compared figure's verdict (analysis.verdict): regressed,
improved, within noise, or no change detected.

Each side of a case is its repeats' median with a 95 % interval (analysis.stats: a bootstrap over 3
repeats or more, else batch means over the measured seconds). A change is called a regression or an
improvement only when the interval of new/old excludes no change AND the change exceeds the noise
floor of this machine for that figure (`gauntlet calibrate noise`; a documented default when it was
not measured, which the output says). Shares (failed requests, each error kind, non-2xx responses)
change in points, against a 1-point floor. A latency percentile is compared only where both sides
have the responses it needs (p99: 1,000; analysis.stats.percentile_shown), else it shows
"n too small"; the server's CPU per request only where both sides counted enough CPU to measure it
(analysis.stats.server_cpu_unshown), else "too little CPU to measure".

Cases pair by key. A parameter that has one value throughout each run but a different one in each
(the suite's timeout changed from 15 s to 1 s) is a setting of the runs, not of a case: cases pair
without it, and the comparison names it. What the connections speak (http or https, the HTTP
version, HTTP/2's streams per connection) is never such a setting: an HTTP/2 run with 10 streams a
connection and one with 1, or an HTTP/1.1 one, measure different cases, which do not pair.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from gauntlet.analysis.stats import Estimate
from gauntlet.analysis.verdict import NOT_MEASURED, Kind, NoiseFloor, Verdict, default_floor, judge
from gauntlet.host import differences
from gauntlet.model.record import case_key
from gauntlet.report.points import PARAM_WORDS, CaseValue, GridPoint, describe, grid_points, kind_share
from gauntlet.report.views import Column, Table, case_cells, format_per_request
from gauntlet.store import CaseRow, RunRow
from gauntlet.store.figures import ERROR_KINDS
from gauntlet.units import format_count, format_duration_us


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
    "latency_p50_us": Compared("p50", False, format_duration_us),
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
class FigureVerdict:
    """One figure of one case: both sides' estimates and the verdict; `verdict` None with the
    reason in `missing` when the figure cannot be compared (a percentile on too few responses)."""

    figure: str
    before: Estimate | None
    after: Estimate | None
    verdict: Verdict | None
    missing: str = ""

    @property
    def regression(self) -> bool:
        return self.verdict is not None and self.verdict.kind is Kind.REGRESSED


@dataclass(frozen=True)
class CaseChange:
    before: GridPoint
    after: GridPoint
    changes: list[FigureVerdict]


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
    #: The parameters of the setting differences: the cases' names leave them out.
    paired_across: list[str] = field(default_factory=list)

    def client_differences(self) -> list[str]:
        """The paired cases whose client ran otherwise in each run ('c 100: no batch window, SCHED_BATCH
        -> batch window 400 µs, SCHED_BATCH'): by default each run's warm-up decides the window
        (docs/architecture.md, "The window's trial"), and older results ran under the normal policy."""
        return [
            f"{case.before.key}: {before} -> {after}"
            for case in self.cases
            if (before := client_settings(case.before)) != (after := client_settings(case.after))
        ]

    def verdicts(self) -> list[tuple[CaseChange, FigureVerdict]]:
        return [(case, c) for case in self.cases for c in case.changes if c.verdict is not None]

    def regressions(self) -> list[tuple[CaseChange, FigureVerdict]]:
        return [(case, c) for case, c in self.verdicts() if c.regression]

    def improvements(self) -> list[tuple[CaseChange, FigureVerdict]]:
        return [(case, c) for case, c in self.verdicts() if c.verdict is not None and c.verdict.kind is Kind.IMPROVED]

    def unmeasured_floors(self) -> list[str]:
        """The figures judged against a default floor because this machine's was not measured."""
        return sorted({c.figure for _, c in self.verdicts() if c.verdict is not None and c.verdict.floor.source == NOT_MEASURED})


def client_settings(point: GridPoint) -> str:
    """The batch windows and scheduling policies the point's measured repeats ran with, in words
    ('no batch window, SCHED_BATCH')."""
    clients = [(case.result or {}).get("client", {}) for case in point.measured]
    windows = sorted({client.get("io_batch_us", 0) for client in clients})
    policies = sorted({client.get("scheduling", "normal") for client in clients})
    return ", ".join(
        [PARAM_WORDS["io_batch_us"](us) for us in windows] + [PARAM_WORDS["scheduling"](policy) for policy in policies]
    )


def judge_figure(
    figure: str, old: GridPoint, new: GridPoint, floors: dict[str, NoiseFloor]
) -> FigureVerdict | None:
    """The verdict on one figure of a pair of points; None when the figure is absent from either
    side (or, for a figure compared only when seen, is 0 throughout)."""
    compared = COMPARED[figure]
    if why := old.unshown(figure) or new.unshown(figure):
        if not old.measured or not new.measured:
            return None
        return FigureVerdict(figure, None, None, None, why)
    before, after = old.estimate(figure, compared.value), new.estimate(figure, compared.value)
    if before is None or after is None:
        return None
    if compared.only_when_seen and not any(max(e.values or (e.point,)) > 0 for e in (before, after)):
        return None
    floor = floors.get(figure) or default_floor(figure, compared.share)
    verdict = judge(before, after, compared.higher_is_better, floor, compared.share)
    return None if verdict is None else FigureVerdict(figure, before, after, verdict)


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
    before: list[CaseRow], after: list[CaseRow], environment_before: dict[str, Any], environment_after: dict[str, Any],
    floors: dict[str, NoiseFloor] | None = None,
) -> Comparison:
    """`floors`: the machine's measured noise floors by figure (Store.noise_floors); a figure
    without one is judged against its default (analysis.verdict.DEFAULT_NOISE_FLOORS)."""
    old_points, new_points = grid_points(before), grid_points(after)
    old_settings, new_settings = run_settings(old_points), run_settings(new_points)
    differing = sorted(n for n in old_settings.keys() | new_settings.keys() if old_settings.get(n) != new_settings.get(n))
    protocol = [n for n in differing if n in PROTOCOL_PARAMS]
    changed = [n for n in differing if n not in PROTOCOL_PARAMS and n in old_settings and n in new_settings]

    def paired_key(point: GridPoint) -> str:
        return case_key({k: v for k, v in point.params.items() if k not in changed})

    points_before = {paired_key(p): p for p in old_points}
    points_after = {paired_key(p): p for p in new_points}
    cases = [
        CaseChange(old, new, [c for figure in COMPARED if (c := judge_figure(figure, old, new, floors or {})) is not None])
        for key, old in points_before.items() if (new := points_after.get(key)) is not None
    ]
    return Comparison(
        cases=cases,
        only_before=[p for k, p in points_before.items() if k not in points_after],
        only_after=[p for k, p in points_after.items() if k not in points_before],
        environment_differences=differences(environment_before, environment_after),
        setting_differences=[f"{name}: {old_settings[name]} -> {new_settings[name]}" for name in changed],
        paired_across=changed,
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
    if clients := comparison.client_differences():
        more = f" and {len(clients) - SUITE_LINES_SHOWN} more" if len(clients) > SUITE_LINES_SHOWN else ""
        found.append(
            f"the client ran otherwise in {len(clients)} paired cases ({'; '.join(clients[:SUITE_LINES_SHOWN])}{more}): "
            "a client that batches its reads, or preempts the server, loads it differently; by default each case's "
            "warm-up decides the window, and results from before the engine chose SCHED_BATCH ran under the normal "
            "policy; pin them (gauntlet run --io-batch, --scheduling; a suite's defaults.io_batch) to compare like with like"
        )
    if comparison.environment_differences:
        found.append(
            f"the runs' environments differ ({'; '.join(comparison.environment_differences)}); "
            "changes may come from the machine, not the server"
        )
    return found


def failing(comparison: Comparison, threshold_pct: float) -> list[tuple[CaseChange, FigureVerdict]]:
    """The regressions that also exceed the CI threshold (a share in percent; 0: any regression)."""
    return [(case, c) for case, c in comparison.regressions() if c.verdict and abs(c.verdict.change.point) * 100 > threshold_pct]


def _interval_text(verdict: Verdict) -> str:
    """The change's 95 % interval, '[+9, +17 %]'; the floor it stands in for without one."""
    if not verdict.change.has_interval:
        return "none"
    scale, digits, unit = (100, 1, " pts") if verdict.share else (100, 0, " %")
    return f"[{verdict.change.low * scale:+.{digits}f}, {verdict.change.high * scale:+.{digits}f}{unit}]"


def _change_text(verdict: Verdict) -> str:
    if verdict.share:
        return f"{100 * verdict.change.point:+.1f} pts"
    return f"{verdict.change.point:+.0%}"


def comparison_table(comparison: Comparison, before_name: str = "baseline", after_name: str = "new") -> Table:
    """One row per case and compared figure: each side's median, the change, its 95 % interval, and
    the verdict (REGRESSION in capitals, so CI logs can be searched for it). The sides' columns are
    named after their runs."""
    # A case is named without the settings it was paired across: each side's value is in the warning.
    leading, named = case_cells([
        replace(case.after, params={k: v for k, v in case.after.params.items() if k not in comparison.paired_across})
        for case in comparison.cases
    ])
    rows = []
    for case, cells in zip(comparison.cases, named, strict=True):
        for c in case.changes:
            compared = COMPARED[c.figure]
            if c.verdict is None or c.before is None or c.after is None:
                rows.append([*cells, compared.heading, "-", "-", "-", "-", c.missing])
                continue
            rows.append([
                *cells, compared.heading, compared.show(c.before.point), compared.show(c.after.point),
                _change_text(c.verdict), _interval_text(c.verdict), c.verdict.text(),
            ])
    columns = (
        *leading, Column("figure", False), Column(before_name), Column(after_name), Column("change"),
        Column("95 % interval"), Column("verdict", False),
    )
    note = (
        "Medians over each run's repeats. The interval is that of the change (new/old - 1; a bootstrap over 3 "
        "repeats or more, else batch means over the measured seconds). A change is a regression or an improvement "
        "only when its interval excludes 0 and it exceeds this machine's noise floor; otherwise no change is "
        "detected within the floor or the interval's reach. Shares (failed, each error kind, non-2xx) change in "
        "points (pts) of all requests."
    )
    return Table("comparison", "Comparison", note, columns, rows)


#: A side naming more distinct servers or URLs than this counts them instead.
NAMED_AT_MOST = 3


def _named(values: list[str], noun: str) -> str | None:
    distinct = list(dict.fromkeys(v for v in values if v))
    if not distinct:
        return None
    return ", ".join(distinct) if len(distinct) <= NAMED_AT_MOST else f"{len(distinct)} {noun}"


def side_name(run: RunRow, cases: list[CaseRow]) -> str:
    """What one side of the comparison measured, from its own cases: 'run 1: nginx 1.24.0, 2 workers,
    http://127.0.0.1:40123/webtest.html' (a suite: its name instead of the URL)."""
    servers = []
    for case in cases:
        kind = case.server_kind or case.params.get("server") or ""
        workers = case.server_workers or case.params.get("workers")
        server = " ".join(part for part in (kind, case.server_version) if part)
        servers.append(f"{server}, {workers} worker{'s' if workers != 1 else ''}" if server and workers else server)
    urls = [case.result["plan"]["url"] for case in cases if case.result is not None and "plan" in case.result]
    where = f"suite {run.suite}" if run.command == "suite" else _named(urls, "URLs")
    parts = [p for p in (_named(servers, "servers"), where) if p]
    return f"run {run.run_id}: {'; '.join(parts) or 'no case measured'}"

"""The report's tables, built by pure functions from grid points: the terminal summary and the HTML
report show the same cells. A table with no row (no server monitor, no sessions) is left out."""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from gauntlet.analysis.qos import verdict
from gauntlet.report.points import GridPoint, Spread, point_names, spread
from gauntlet.store import RunRow
from gauntlet.units import format_bytes, format_count, format_duration_us


class Column(NamedTuple):
    name: str
    numeric: bool = True


@dataclass(frozen=True)
class Table:
    table_id: str
    title: str
    note: str
    columns: tuple[Column, ...]
    rows: list[list[str]]


def _or_dash(value: Spread | None, show: Callable[[float], str]) -> str:
    return "-" if value is None else show(value.mean)


def format_per_request(value: float) -> str:
    """A per-request figure (µs, switches, faults) with the digits that matter."""
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def _percent(share: float) -> str:
    return "0%" if share == 0 else f"{share:.1%}"


def _spread_text(value: Spread | None) -> str:
    """How far apart the repeats were: (max - min) / mean."""
    return "" if value is None or value.n < 2 else f"{value.relative_range:.0%}"


def _failed_share(point: GridPoint) -> str:
    responses = sum(c.figures.get("responses") or 0 for c in point.measured)
    errors = sum(c.figures.get("errors_total") or 0 for c in point.measured)
    return "-" if responses + errors == 0 else _percent(errors / (responses + errors))


def case_cells(points: list[GridPoint]) -> tuple[tuple[Column, ...], list[list[str]]]:
    """The leading columns that name each point: its group (the part of the study) when the cases
    come from several, then the parameters that tell it apart from the others."""
    names = point_names(points, ["group"])
    if len({p.params.get("group") for p in points}) < 2:
        return (Column("case", False),), [[name] for name in names]
    cells = [[str(p.params.get("group", "")), name] for p, name in zip(points, names, strict=True)]
    return (Column("group", False), Column("case", False)), cells


def _without_empty(
    columns: tuple[Column, ...], rows: list[list[str]], optional: set[str]
) -> tuple[tuple[Column, ...], list[list[str]]]:
    """The table without those of the `optional` columns that are empty in every row."""
    keep = [i for i, c in enumerate(columns) if c.name not in optional or any(row[i] for row in rows)]
    return tuple(columns[i] for i in keep), [[row[i] for i in keep] for row in rows]


def cases_table(points: list[GridPoint]) -> Table:
    """The headline: one row per grid point, its repeats together. The repeats, their spread and
    the bottleneck labels show only when some case has them."""
    leading, named = case_cells(points)
    repeated = any(len(p.measured) + len(p.failed) > 1 for p in points)
    rows = []
    for point, cells in zip(points, named, strict=True):
        rate = point.figure("requests_per_s")
        p50, p99 = point.latency_percentiles_us([0.5, 0.99]) or (None, None)
        repeats = ""
        if repeated:
            repeats = f"{len(point.measured)}" + (f" (+{len(point.failed)} failed)" if point.failed else "")
        rows.append([
            *cells, repeats, _or_dash(rate, format_count), _spread_text(rate),
            "-" if p50 is None else format_duration_us(p50), "-" if p99 is None else format_duration_us(p99),
            _failed_share(point),
            _or_dash(point.figure("client_cpu_us_per_request"), format_per_request),
            _or_dash(point.figure("server_cpu_us_per_request"), format_per_request),
            ", ".join(point.labels),
        ])
    columns, rows = _without_empty(
        (
            *leading, Column("repeats"), Column("req/s"), Column("spread"), Column("p50"), Column("p99"),
            Column("failed"), Column("client µs"), Column("server µs"), Column("bottleneck", False),
        ),
        rows,
        {"repeats", "spread", "bottleneck"},
    )
    note = (
        "Means over the repeats; spread is (max - min) / mean of requests/s; p50 and p99 from the repeats' "
        "histograms merged; failed: the share of requests that ended in an error; CPU in µs per request."
    )
    return Table("cases", "Cases", note, columns, rows)


def resources_table(points: list[GridPoint]) -> Table:
    """SPECweb2005's per-request resource table, client cost beside it."""
    monitored = [p for p in points if p.figure("server_cpu_us_per_request") is not None]
    leading, named = case_cells(monitored)
    rows = [
        [
            *cells,
            _or_dash(point.figure("server_cpu_us_per_request"), format_per_request),
            _or_dash(point.figure("server_context_switches_per_request"), format_per_request),
            _or_dash(point.figure("server_page_faults_per_request"), lambda v: f"{v:.3f}"),
            _or_dash(point.figure("client_cpu_us_per_request"), format_per_request),
            _or_dash(point.figure("server_max_processes"), format_count),
        ]
        for point, cells in zip(monitored, named, strict=True)
    ]
    columns = (
        *leading, Column("server CPU µs/req"), Column("context switches/req"), Column("page faults/req"),
        Column("client CPU µs/req"), Column("server processes"),
    )
    note = "All the server's processes from /proc (docs/metrics.md), per completed request; means over the repeats."
    return Table("resources", "Resources per request", note, columns, rows)


def memory_table(points: list[GridPoint]) -> Table:
    """The thesis's VmRSS/VmSize table: per role of the server's processes."""
    monitored = [p for p in points if p.figure("server_rss_bytes") is not None]
    leading, named = case_cells(monitored)
    rows = []
    for point, cells in zip(monitored, named, strict=True):
        by_role: dict[str, list[dict[str, int]]] = defaultdict(list)
        for case in point.measured:
            for role, memory in (case.result or {}).get("server", {}).get("memory", {}).items():
                by_role[role].append(memory)
        for role, samples in sorted(by_role.items()):
            mean = {k: spread(s[k] for s in samples) for k in ("processes", "rss_bytes", "vm_size_bytes")}
            rows.append([
                *cells, role, _or_dash(mean["processes"], format_count), _or_dash(mean["rss_bytes"], format_bytes),
                _or_dash(mean["vm_size_bytes"], format_bytes),
            ])
    columns = (*leading, Column("role", False), Column("processes"), Column("RSS"), Column("virtual size"))
    note = "Summed over each role's processes at the monitor's last sample; means over the repeats."
    return Table("memory", "Memory footprint", note, columns, rows)


def _sessions_results(point: GridPoint) -> list[dict[str, Any]]:
    return [c.result for c in point.measured if c.result and c.result.get("sessions")]


def qos_valid(result: dict[str, Any]) -> bool:
    """The verdict the suite stored with a sessions result (its load file's shares), else SPECweb's
    rule: >= 95 % GOOD and >= 99 % GOOD + TOLERABLE for every page type."""
    if "qos" in result:
        return bool(result["qos"]["valid"])
    return verdict(result["sessions"]).valid


def qos_table(points: list[GridPoint]) -> Table:
    """SPECweb2005 QoS per page type: the classes' shares over every repeat, and the case's verdict
    (valid when every repeat is)."""
    sessions = [p for p in points if _sessions_results(p)]
    rows = []
    for point, name in zip(sessions, point_names(sessions), strict=True):
        measured = _sessions_results(point)
        valid = all(qos_valid(r) for r in measured)
        results = [r["sessions"] for r in measured]
        for page in sorted({page for s in results for page in s["pages"]}):
            counts = {k: sum(s["pages"].get(page, {}).get(k, 0) for s in results) for k in ("count", "good", "tolerable", "fail")}
            views = counts["count"]
            shares = [_percent(counts[k] / views) if views else "-" for k in ("good", "tolerable", "fail")]
            rows.append([name, page, format_count(views), *shares, "VALID" if valid else "INVALID"])
    columns = (
        Column("case", False), Column("page", False), Column("views"), Column("good"), Column("tolerable"),
        Column("fail"), Column("verdict", False),
    )
    note = "GOOD/TOLERABLE/FAIL as SPECweb2005 defines them (time, or byte rate for downloads); verdict of the whole case."
    return Table("qos", "QoS verdicts", note, columns, rows)


def capacity_table(points: list[GridPoint]) -> Table:
    """The most simultaneous sessions that stayed valid, per series of user levels."""
    levels: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    sessions = [p for p in points if isinstance(p.params.get("users"), int) and _sessions_results(p)]
    for point, name in zip(sessions, point_names(sessions, ["users"]), strict=True):
        levels[name].append((point.params["users"], all(qos_valid(r) for r in _sessions_results(point))))
    rows = []
    for name, probes in levels.items():
        if len(probes) < 2:
            continue
        probes.sort()
        capacity = max((users for users, valid in probes if valid), default=0)
        above = [users for users, valid in probes if not valid and users > capacity]
        shown = ", ".join(f"{format_count(users)} {'valid' if valid else 'invalid'}" for users, valid in probes)
        rows.append([name, shown, format_count(capacity), format_count(min(above)) if above else "none failed"])
    columns = (Column("case", False), Column("levels probed", False), Column("capacity (users)"), Column("first invalid above"))
    note = "The true capacity lies between the largest valid level and the first invalid one above it."
    return Table("capacity", "Capacity", note, columns, rows)


def failures_table(points: list[GridPoint]) -> Table:
    leading, named = case_cells(points)
    rows = []
    for point, cells in zip(points, named, strict=True):
        for case in sorted([*point.measured, *point.failed], key=lambda c: c.repeat):
            if case.status != "ok":
                why = case.error or "cut short: the figures cover what was measured"
                rows.append([*cells, str(case.repeat), case.status, why])
    columns = (*leading, Column("repeat"), Column("status", False), Column("why", False))
    return Table("failures", "Cases that did not complete", "", columns, rows)


def _flattened(values: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, value in values.items():
        if isinstance(value, dict) and value:
            yield from _flattened(value, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", value


def flatten(values: dict[str, Any]) -> dict[str, Any]:
    """Nested keys joined with dots: {"cpu": {"model": ...}} -> {"cpu.model": ...}."""
    return dict(_flattened(values))


def environment_table(run: RunRow) -> Table:
    rows = [[name, str(value)] for name, value in flatten(run.environment).items()]
    title = f"Environment of run {run.run_id}"
    columns = (Column("what", False), Column("value", False))
    return Table(f"environment-{run.run_id}", title, "As the run recorded it.", columns, rows)


def run_line(run: RunRow) -> str:
    """'run 3: suite quick, complete, 24 of 24 cases, 2026-11-22 10:04 UTC, 6m12s' (or 'gauntlet run' for a command's run)."""
    started = datetime.datetime.fromtimestamp(run.started_unix_ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    took = "" if run.ended_unix_ms is None else f", {format_duration_us((run.ended_unix_ms - run.started_unix_ms) * 1000)}"
    made_by = f"suite {run.suite}" if run.command == "suite" else f"gauntlet {run.command}"
    return (
        f"run {run.run_id}: {made_by}, {run.status}, {run.stored_cases} of {run.planned_cases} cases stored, "
        f"started {started}{took}"
    )


def configs(points: list[GridPoint]) -> list[tuple[str, str]]:
    """(case and server version, rendered config) of each point's first repeat that has a config."""
    found = []
    for point, name in zip(points, point_names(points), strict=True):
        case = next((c for c in [*point.measured, *point.failed] if c.config_text), None)
        if case is not None and case.config_text:
            found.append((f"{name} ({case.server_version})" if case.server_version else name, case.config_text))
    return found


TABLES: tuple[Callable[[list[GridPoint]], Table], ...] = (
    cases_table, resources_table, memory_table, qos_table, capacity_table, failures_table,
)
#: The terminal summary: the headline tables, without the wide per-role memory rows.
SUMMARY_TABLES: tuple[Callable[[list[GridPoint]], Table], ...] = (cases_table, qos_table, capacity_table, failures_table)


def tables(points: list[GridPoint], builders: tuple[Callable[[list[GridPoint]], Table], ...] = TABLES) -> list[Table]:
    return [table for table in (build(points) for build in builders) if table.rows]


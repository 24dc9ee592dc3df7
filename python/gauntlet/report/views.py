"""The report's tables, built by pure functions from grid points: the terminal summary and the HTML
report show the same cells. A table with no row (no server monitor, no sessions) is left out."""

from __future__ import annotations

import datetime
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from gauntlet.analysis.bottleneck import failed_requests, stuck_unanswered
from gauntlet.analysis.machine import BUSY_SHARE
from gauntlet.analysis.invariants import breach_reasons
from gauntlet.analysis.qos import verdict
from gauntlet.report.phases import by_load, first_phased
from gauntlet.analysis import stats
from gauntlet.analysis.stats import Estimate
from gauntlet.model.loadfile import LEVEL_NAMES
from gauntlet.report.points import GridPoint, point_names
from gauntlet.store import CaseHeadline, RunRow
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


def _or_dash(value: Estimate | float | None, show: Callable[[float], str]) -> str:
    if value is None:
        return "-"
    return show(value.point if isinstance(value, Estimate) else value)


def format_per_request(value: float) -> str:
    """A per-request figure (µs, switches, faults) with the digits that matter."""
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def _percent(share: float) -> str:
    return "0%" if share == 0 else f"{share:.1%}"


def _interval_text(value: Estimate | None) -> str:
    """The 95 % interval as +-share of the median ('±4%'); empty without one."""
    return "" if value is None or not value.has_interval else f"±{value.relative_half_width:.0%}"


def _merged_percentile(point: GridPoint, name: str, value_us: int | None) -> str:
    """A percentile of the repeats' merged histograms, or stats.TOO_FEW on too few responses."""
    if value_us is None:
        return "-"
    responses = sum(c.figures.get("responses") or 0 for c in point.measured)
    return format_duration_us(value_us) if stats.percentile_shown(name, responses) else stats.TOO_FEW


def _failed_share(point: GridPoint) -> str:
    """Over every repeat with a result, as `error-bound` counts them (analysis.bottleneck.failed_requests:
    errors, statuses other than 2xx/3xx, requests stuck unanswered): a case where nothing was
    answered is 100 %."""
    results = [c.result for c in (*point.measured, *point.failed) if c.result is not None]
    ended = sum(r["requests"] + stuck_unanswered(r) for r in results)
    return "-" if ended == 0 else _percent(sum(failed_requests(r) for r in results) / ended)


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
            *cells, repeats, _or_dash(rate, format_count), _interval_text(rate),
            _merged_percentile(point, "p50", p50), _merged_percentile(point, "p99", p99),
            _failed_share(point),
            _or_dash(point.figure("client_cpu_us_per_request"), format_per_request),
            _or_dash(point.figure("server_cpu_us_per_request"), format_per_request),
            _or_dash(point.figure("machine_other_cpu_share"), lambda share: f"{share:.1%}"),
            ", ".join(point.labels),
        ])
    columns, rows = _without_empty(
        (
            *leading, Column("repeats"), Column("req/s"), Column("95 %"), Column("p50"), Column("p99"),
            Column("failed"), Column("client µs"), Column("server µs"), Column("other CPU"), Column("bottleneck", False),
        ),
        rows,
        {"repeats", "95 %", "bottleneck"},
    )
    note = (
        "Medians over the repeats; 95 %: the interval of requests/s (docs/metrics.md); p50 and p99 from the repeats' "
        "histograms merged (n too small: p99 needs 1,000 responses); failed: the share of requests that ended in an "
        "error or a status other than 2xx/3xx, or stuck unanswered; CPU in µs per request; other CPU: the machine's cores used by neither client nor server while "
        f"measured (machine-busy past {BUSY_SHARE:.0%})."
    )
    return Table("cases", "Cases", note, columns, rows)


def resources_table(points: list[GridPoint]) -> Table:
    """SPECweb2005's per-request resource table, client cost beside it: every case whose server was
    monitored (its CPU a dash where too little was measured: stats.server_cpu_unshown)."""
    monitored = [p for p in points if p.figure("server_max_processes") is not None]
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
    note = "All the server's processes from /proc (docs/metrics.md), per completed request; medians over the repeats."
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
            mean = {k: statistics.fmean(s[k] for s in samples) for k in ("processes", "rss_bytes", "vm_size_bytes")}
            rows.append([
                *cells, role, _or_dash(mean["processes"], format_count), _or_dash(mean["rss_bytes"], format_bytes),
                _or_dash(mean["vm_size_bytes"], format_bytes),
            ])
    columns = (*leading, Column("role", False), Column("processes"), Column("RSS"), Column("virtual size"))
    note = "Summed over each role's processes at the monitor's last sample; means over the repeats."
    return Table("memory", "Memory footprint", note, columns, rows)


def php_memory_table(points: list[GridPoint]) -> Table:
    """The thesis's Table A.12: the memory of one PHP process (a PHP-FPM or php-cgi worker, or an
    Apache worker with mod_php in it), per case; OPcache on and off tell cases apart when both ran."""
    php = [p for p in points if p.figure("php_worker_rss_bytes") is not None]
    leading, named = case_cells(php)
    rows = []
    for point, cells in zip(php, named, strict=True):
        roles = {((c.result or {}).get("server") or {}).get("php_role") for c in point.measured} - {None}
        rows.append([
            *cells, ", ".join(sorted(str(r) for r in roles)),
            _or_dash(point.figure("php_worker_rss_bytes"), format_bytes),
            _or_dash(point.figure("php_worker_vm_size_bytes"), format_bytes),
        ])
    columns = (*leading, Column("PHP role", False), Column("RSS per process"), Column("virtual size per process"))
    note = (
        "The role that runs PHP (backend: the PHP-FPM pool with its master, or php-cgi; worker: Apache's, with "
        "mod_php) at the monitor's last sample, divided by its processes; medians over the repeats."
    )
    return Table("php-memory", "PHP memory per process (Table A.12)", note, columns, rows)


def qos_valid(result: dict[str, Any]) -> bool:
    """The verdict the suite stored with a sessions result (its load file's shares), else SPECweb's
    rule: >= 95 % GOOD and >= 99 % GOOD + TOLERABLE for every page type."""
    if "qos" in result:
        return bool(result["qos"]["valid"])
    return verdict(result["sessions"]).valid


def probe_valid(point: GridPoint) -> bool | None:
    """A sessions level's verdict: valid when every repeat met the QoS; invalid when one did not or
    ended without a result (a server that stalled or died under the level: the capacity search counts
    it invalid too); None for a point that is no sessions level."""
    results = point.sessions_results()
    if results:
        return all(qos_valid(r) for r in results) and not point.failed
    return False if point.failed else None


def qos_table(points: list[GridPoint]) -> Table:
    """SPECweb2005 QoS per page type: the classes' shares over every repeat, and the case's verdict
    (valid when every repeat is)."""
    sessions = [p for p in points if p.sessions_results()]
    rows = []
    for point, name in zip(sessions, point_names(sessions), strict=True):
        measured = point.sessions_results()
        valid = all(qos_valid(r) for r in measured)
        results = [r["sessions"] for r in measured]
        for page in sorted({page for s in results for page in s["pages"]}):
            kinds = ("count", "good", "tolerable", "fail", "invalid")
            counts = {k: sum(s["pages"].get(page, {}).get(k, 0) for s in results) for k in kinds}
            views = counts["count"]
            shares = [_percent(counts[k] / views) if views else "-" for k in ("good", "tolerable", "fail")]
            rows.append([name, page, format_count(views), *shares, format_count(counts["invalid"]), "VALID" if valid else "INVALID"])
    columns = (
        Column("case", False), Column("page", False), Column("views"), Column("good"), Column("tolerable"),
        Column("fail"), Column("failed checks"), Column("verdict", False),
    )
    note = (
        "GOOD/TOLERABLE/FAIL as SPECweb2005 defines them (time, or byte rate for downloads); a page that failed its "
        "check (error status, content marker missing) is a FAIL; verdict of the whole case."
    )
    return Table("qos", "QoS verdicts", note, columns, rows)


def capacity_table(points: list[GridPoint]) -> Table:
    """The most simultaneous sessions (or new users/s at the peak phase) that stayed valid, per
    series of levels."""
    levels: dict[str, list[tuple[int, bool, bool]]] = defaultdict(list)
    for level in LEVEL_NAMES:
        sessions = [p for p in points if isinstance(p.params.get(level), int) and probe_valid(p) is not None]
        for point, name in zip(sessions, point_names(sessions, [level]), strict=True):
            broke = any(r["qos"].get("server_answered_after") is False for r in point.sessions_results() if "qos" in r)
            levels[f"{name} (users/s at the peak)" if level != "users" else name].append(
                (point.params[level], bool(probe_valid(point)), broke)
            )
    rows = []
    for name, probes in levels.items():
        if len(probes) < 2:
            continue
        probes.sort()
        capacity = max((users for users, valid, _ in probes if valid), default=0)
        above = [users for users, valid, _ in probes if not valid and users > capacity]
        shown = ", ".join(
            f"{format_count(users)} {'valid' if valid else 'invalid'}{' (server stopped answering)' if broke else ''}"
            for users, valid, broke in probes
        )
        rows.append([name, shown, format_count(capacity), format_count(min(above)) if above else "none failed"])
    columns = (Column("case", False), Column("levels probed", False), Column("capacity (users)"), Column("first invalid above"))
    note = (
        "The true capacity lies between the largest valid level and the first invalid one above it. A level "
        "after which the server stopped answering broke it: the next level ran on a server started again."
    )
    return Table("capacity", "Capacity", note, columns, rows)


def _errors_in(timeline: list[dict[str, Any]], start_s: float, end_s: float) -> str:
    """The errors by kind of the seconds that began in [start_s, end_s)."""
    kinds: Counter[str] = Counter()
    for second in timeline:
        if start_s <= second["second"] < end_s:
            kinds.update(second.get("errors_by_kind") or {})
    return ", ".join(f"{kind} {format_count(n)}" for kind, n in sorted(kinds.items())) or "none"


def phases_table(points: list[GridPoint]) -> Table:
    """Phase by phase for each server (its first repeat): users, pages, page times and QoS per page
    type, errors by kind, and whether the phase held (every page type QoS-valid in it)."""
    rows = []
    for members in by_load(points).values():
        for point, name in zip(members, point_names(members, ["group"]), strict=True):
            case = first_phased(point)
            assert case is not None and case.result is not None
            validity = page_validity(case.result)
            for k, phase in enumerate(case.result["sessions"]["phases"], 1):
                start_s = phase["start_us"] / 1e6
                pages = sorted(phase["pages"].items())
                held = all(valid for page, valid in validity.items() if page.endswith(f" in phase {k}"))
                rows.append([
                    name, f"{k}: {phase['users_per_s']:g}/s", "held" if held else "BROKE", format_count(phase["users_arrived"]),
                    format_count(phase["users_dropped"]),
                    ", ".join(f"{page} {format_duration_us(v['page_time_us']['p99'])}" for page, v in pages if v["count"]),
                    ", ".join(f"{page} {v['good'] / v['count']:.0%}" for page, v in pages if v["count"]),
                    _errors_in(case.result["timeline"], start_s, start_s + phase["duration_us"] / 1e6),
                ])
    columns = (
        Column("case", False), Column("phase", False), Column("QoS", False), Column("users"), Column("dropped"),
        Column("p99 page time", False), Column("GOOD", False), Column("errors", False),
    )
    note = (
        "Each server's first repeat, phase by phase: users who arrived and were dropped; of the pages that began "
        "in the phase, the p99 page time and GOOD share per page type; the errors of the phase's seconds; and "
        "whether every page type met the QoS shares in it."
    )
    return Table("phases", "Arrival phases", note, columns, rows)


def page_validity(result: dict[str, Any]) -> dict[str, bool]:
    """Each page type's validity in each phase ("home in phase 2"): as the suite stored it with the
    load file's shares, else by SPECweb2005's."""
    if "qos" in result:
        return {name: bool(page["valid"]) for name, page in result["qos"]["pages"].items()}
    return {page.name: page.valid for page in verdict(result["sessions"]).pages}


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


def breaches_table(points: list[GridPoint]) -> Table:
    """The cases whose result broke an invariant, apart from the others, with what broke."""
    leading, named = case_cells(points)
    rows = []
    for point, cells in zip(points, named, strict=True):
        for case in sorted(point.measured, key=lambda c: c.repeat):
            if case.breaches and case.result is not None:
                rows += [[*cells, str(case.repeat), reason] for reason in breach_reasons(case.result["invariants"])]
    columns = (*leading, Column("repeat"), Column("broken", False))
    note = (
        "Their figures cannot all be true (docs/metrics.md, Invariants): the CPU did not fit in the machine, "
        "the monitor read the server too seldom, or the server logged another count than the engine's."
    )
    return Table("breaches", "Cases whose result breaks an invariant", note, columns, rows)


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
    probes = f" ({run.stored_probes} capacity probes)" if run.stored_probes else ""
    return (
        f"run {run.run_id}: {made_by}, {run.status}, {run.stored_cases} of {run.planned_cases} cases stored{probes}, "
        f"started {started}{took}"
    )


def _targets(cases: list[CaseHeadline]) -> str:
    """The servers Gauntlet started, then the URLs measured: 'builtin, nginx', 'http://10.0.0.2/'."""
    servers = sorted({str(kind) for c in cases if (kind := c.server_kind or c.params.get("server"))})
    urls = sorted({str(c.params["url"]) for c in cases if c.params.get("url")})
    return ", ".join([*servers, *urls]) or "-"


def _headline_rate(cases: list[CaseHeadline]) -> str:
    """Requests/s, the median of each case's repeats: the one figure, or the lowest to the highest."""
    by_key: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        if case.requests_per_s is not None:
            by_key[case.key].append(case.requests_per_s)
    medians = sorted(statistics.median(rates) for rates in by_key.values())
    if not medians:
        return "-"
    low, high = format_count(medians[0]), format_count(medians[-1])
    return low if low == high else f"{low} to {high}"


def runs_table(runs: list[RunRow], headlines: dict[int, list[CaseHeadline]]) -> Table:
    """`gauntlet report --list`: each run with what it measured (servers or URLs), its cases and its
    headline figure, oldest first."""
    rows = []
    for run in runs:
        cases = headlines.get(run.run_id, [])
        started = datetime.datetime.fromtimestamp(run.started_unix_ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M")
        made_by = f"suite {run.suite}" if run.command == "suite" else f"gauntlet {run.command}"
        rows.append([
            str(run.run_id), made_by, _targets(cases), run.status, f"{run.stored_cases} of {run.planned_cases}",
            _headline_rate(cases), started,
        ])
    columns = (
        Column("run"), Column("made by", False), Column("server or URL", False), Column("status", False),
        Column("cases"), Column("req/s"), Column("started (UTC)", False),
    )
    note = "req/s: the median of each case's repeats; the lowest to the highest when the run has several cases."
    return Table("runs", "Runs", note, columns, rows)


def configs(points: list[GridPoint]) -> list[tuple[str, str]]:
    """(case and server version, rendered config) of each point's first repeat that has a config."""
    found = []
    for point, name in zip(points, point_names(points), strict=True):
        case = next((c for c in [*point.measured, *point.failed] if c.config_text), None)
        if case is not None and case.config_text:
            found.append((f"{name} ({case.server_version})" if case.server_version else name, case.config_text))
    return found


TABLES: tuple[Callable[[list[GridPoint]], Table], ...] = (
    cases_table, breaches_table, resources_table, memory_table, php_memory_table, qos_table, phases_table,
    capacity_table, failures_table,
)
#: The terminal summary: the headline tables, without the wide per-role memory rows.
SUMMARY_TABLES: tuple[Callable[[list[GridPoint]], Table], ...] = (
    cases_table, breaches_table, qos_table, phases_table, capacity_table, failures_table,
)


def tables(points: list[GridPoint], builders: tuple[Callable[[list[GridPoint]], Table], ...] = TABLES) -> list[Table]:
    return [table for table in (build(points) for build in builders) if table.rows]


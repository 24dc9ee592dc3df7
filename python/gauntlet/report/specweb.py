"""SPECweb2005's headline table for session loads (the specweb-dynamic suite): per workload and
configuration, the most simultaneous sessions that stayed valid, and what a page cost the server at
that level — CPU ms, context switches and page faults per page, from the monitor, over the
measured interval. A page is a page of the load (its main request and its embedded resources)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from gauntlet.analysis.qos import pages_of
from gauntlet.report.points import GridPoint, point_names
from gauntlet.report.views import Column, Table, probe_valid
from gauntlet.units import format_count

LEVEL = "users"


def per_page(result: dict[str, Any]) -> tuple[float, float, float] | None:
    """(server CPU ms, context switches, page faults) per page; None without the monitor or a page."""
    server, pages = result.get("server"), pages_of(result)
    if not server or not pages:
        return None
    cpu_ms = (server["cpu_user_s"] + server["cpu_system_s"]) * 1e3
    switches = server["voluntary_switches"] + server["involuntary_switches"]
    faults = server["minor_faults"] + server["major_faults"]
    return cpu_ms / pages, switches / pages, faults / pages


def _figure(results: list[dict[str, Any]], index: int) -> str:
    return _mean_text([figures[index] for figures in map(per_page, results) if figures is not None])


def _warm_up_figure(results: list[dict[str, Any]]) -> str:
    """The server's CPU ms per page over the search's warm-up runs (one per server started)."""
    return _mean_text([r["warm_up"]["server_cpu_ms_per_page"] for r in results if (r.get("warm_up") or {}).get("server_cpu_ms_per_page")])


def _mean_text(values: list[float]) -> str:
    if not values:
        return "-"
    mean = statistics.fmean(values)
    return f"{mean:,.1f}" if mean >= 10 else f"{mean:.2f}"


def specweb_table(points: list[GridPoint]) -> Table:
    """One row per series of session levels (a capacity search, or a single level): the valid
    sessions found, and the per-page figures at the largest valid level (at the smallest level
    probed when none was valid)."""
    sessions = [p for p in points if isinstance(p.params.get(LEVEL), int) and probe_valid(p) is not None]
    series: dict[str, list[GridPoint]] = defaultdict(list)
    for point, name in zip(sessions, point_names(sessions, [LEVEL]), strict=True):
        series[name].append(point)
    rows = []
    for name, probes in series.items():
        judged = sorted(((p.params[LEVEL], bool(probe_valid(p)), p) for p in probes), key=lambda t: t[0])
        valid = [t for t in judged if t[1]]
        users, _, at = valid[-1] if valid else judged[0]
        results = at.sessions_results()
        above = [level for level, ok, _ in judged if not ok and level > users]
        rows.append([
            name,
            format_count(users) if valid else f"0 (invalid at {format_count(users)})",
            format_count(min(above)) if above else "none failed",
            format_count(sum(map(pages_of, results)) // len(results)) if results else "-",
            _warm_up_figure([r for _, _, p in judged for r in p.sessions_results()]),
            *(_figure(results, i) for i in range(3)),
        ])
    columns = (
        Column("configuration", False), Column("valid sessions"), Column("first invalid above", False),
        Column("pages"), Column("warm-up CPU ms/page"), Column("server CPU ms/page"), Column("context switches/page"),
        Column("page faults/page"),
    )
    note = (
        "Valid: every page type met SPECweb2005's QoS (a page that failed its check is a FAIL). "
        "Figures at the valid level shown, all the server's processes, means over the repeats; warm-up: the "
        "server's CPU per page in the run before the first probe, cold (docs/reports.md)."
    )
    return Table("specweb", "Sessions that stayed valid, and the server's cost per page", note, columns, rows)

"""The latency charts: percentiles against concurrency or the offered rate (p99 and p50, never the
mean, which hides the tail), and each case's whole latency distribution from its stored
HdrHistogram, drawn as the HdrHistogram plotter draws it: latency against the percentile on a
1/(1-q) log axis, where 90 %, 99 %, 99.9 % and 99.99 % are equally far apart."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from gauntlet.analysis import stats
from gauntlet.report.figure import FACETS, Chart, base_layout, facet_groups, latency_unit, lines, log_axis, make_chart, text, titled
from gauntlet.report.points import CaseValue, GridPoint, describe, point_names, stored_figure, varying
from gauntlet.report.ranking import CONTENDER_PARAMS

#: The most lines one chart draws before it is split by a parameter of the load (connections, rate).
MAX_LINES = 8
#: Points per decade of 1/(1-q) on the distribution chart.
POINTS_PER_DECADE = 12
#: The distribution's x ticks: 1/(1-q) at 0 %, 90 %, 99 % ... of the requests.
PERCENTILE_TICKS = {1: "0%", 10: "90%", 100: "99%", 1_000: "99.9%", 10_000: "99.99%", 100_000: "99.999%", 1_000_000: "99.9999%"}


def _percentile_lines(points: list[GridPoint], x_param: str, *, chart_id: str, title: str, x_title: str) -> list[Chart]:
    """p99 (solid) and p50 (dashed) latency against `x_param`, in the unit the largest reads best in."""
    p99s = [v for p in points for c in p.measured if (v := c.figures.get("latency_p99_us")) is not None]
    divisor, unit = latency_unit(p99s)

    def scaled(name: str) -> CaseValue:
        figure = stored_figure(name)
        return lambda case: None if (v := figure(case)) is None else v / divisor

    return lines(
        points, x_param, {"p99": scaled("latency_p99_us"), "p50": scaled("latency_p50_us")}, chart_id=chart_id,
        title=title, x_title=x_title, y_title=f"latency ({unit}): p99 solid, p50 dashed",
        note="p99 and p50 latency (from the intended send) of each case, the median of its repeats'.",
    )


def response_time_vs_concurrency(points: list[GridPoint]) -> list[Chart]:
    """Nguyen's Figs. 3-5, middle panel, with percentiles for his mean."""
    return _percentile_lines(points, "connections", chart_id="response-time", title="Response time vs concurrency",
                             x_title="connections")


def response_time_vs_rate(points: list[GridPoint]) -> list[Chart]:
    """The Deathmatch's response time against the offered rate."""
    return _percentile_lines(points, "rate_per_s", chart_id="rate-response-time", title="Response time vs offered rate",
                             x_title="offered requests/s")


def fitted_facets(points: list[GridPoint]) -> dict[str, list[GridPoint]]:
    """The points by FACETS; a facet of more than MAX_LINES points split again by the first load
    parameter that varies in it (connections, rate...), until each fits or nothing is left to split by."""
    found: dict[str, list[GridPoint]] = {}
    pending = list(facet_groups(points, FACETS).items())
    while pending:
        facet, members = pending.pop(0)
        by = [name for name in varying(members) if name not in CONTENDER_PARAMS]
        if len(members) <= MAX_LINES or not by:
            found[facet] = members
            continue
        parts: dict[str, list[GridPoint]] = defaultdict(list)
        for point in members:
            parts[", ".join(part for part in (facet, describe(point.params, [by[0]])) if part)].append(point)
        pending[:0] = parts.items()
    return found


def distribution_xs(count: int) -> list[float]:
    """1/(1-q) from 1 (q = 0) to the last percentile `count` responses stand behind (the sample rule
    of analysis.stats: 10 responses beyond it, so p99 needs 1,000), POINTS_PER_DECADE a decade."""
    reach = max(count / stats.RESPONSES_BEYOND_PERCENTILE, 1)
    steps = math.floor(math.log10(reach) * POINTS_PER_DECADE + 1e-9)
    return [10 ** (step / POINTS_PER_DECADE) for step in range(steps + 1)]


def _distribution(point: GridPoint) -> tuple[list[float], list[int]] | None:
    """(1/(1-q), latency µs) over the point's repeats' histograms merged, None without a response."""
    count = sum(c.result["latency_us"]["count"] for c in point.measured if c.result)
    xs = distribution_xs(count)
    values_us = point.latency_percentiles_us([1 - 1 / x for x in xs]) if count else None
    return None if values_us is None else (xs, values_us)


def latency_distribution(points: list[GridPoint]) -> list[Chart]:
    """Each case's latency at every percentile its responses reach, one chart per facet (at most
    MAX_LINES lines), on the HdrHistogram plotter's axes."""
    charts: list[Chart] = []
    for facet, members in fitted_facets(points).items():
        named = [(name, found) for point, name in zip(members, point_names(members, list(FACETS)), strict=True)
                 if (found := _distribution(point)) is not None]
        if not named:
            continue
        divisor, unit = latency_unit([v for _, (_, values) in named for v in values])
        traces: list[dict[str, Any]] = [
            {"type": "scatter", "mode": "lines+markers", "marker": {"size": 3}, "name": text(name), "x": xs, "y": [v / divisor for v in values],
             "hovertemplate": "%{customdata}: %{y} " + unit + "<extra></extra>",
             "customdata": [f"p{100 * (1 - 1 / x):.4g}" for x in xs]}
            for name, (xs, values) in named
        ]
        ys = [y for trace in traces for y in trace["y"] if y > 0]
        top = max(trace["x"][-1] for trace in traces)
        ticks = [x for x in PERCENTILE_TICKS if x <= top * 1.0001] or [1]
        x_axis: dict[str, Any] = {
            "type": "log", "tickmode": "array", "tickvals": ticks, "ticktext": [PERCENTILE_TICKS[x] for x in ticks],
            "range": [0, math.log10(max(top, 10))],
        }
        y_axis = log_axis(min(ys, default=1), max(ys, default=1)) | {"rangemode": "normal"}
        layout = base_layout("percentile of the requests (1/(1-q) axis)", f"latency ({unit})", xaxis=x_axis, yaxis=y_axis)
        note = (
            "Latency (from the intended send) at each percentile, from the repeats' histograms merged, up to the "
            "last percentile with 10 responses beyond it (p99 needs 1,000: docs/metrics.md)."
        )
        charts.append(make_chart(f"distribution-{len(charts) + 1}", titled("Latency distribution", facet), note, traces, layout))
    return charts

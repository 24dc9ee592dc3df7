"""The studies' charts as Plotly figure dicts, built by pure functions from grid points.

Each view returns a list of charts, empty when the cases hold nothing for it (no concurrency that
varies, no keep-alive pair, ...), so the report shows only what the run measured. Every string that
comes from a case (parameters, names) is HTML-escaped here: Plotly renders tags in trace names and
axis labels.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gauntlet.report.downsample import lttb
from gauntlet.report.points import CaseValue, GridPoint, Spread, describe, difference_text, error_share, point_names

#: The parameters that split a view into one chart each: lines are only drawn between cases that
#: agree on these (the same part of the study, the same file, the same connection handling).
FACETS = ("group", "workload", "path", "keepalive", "protocol", "model")
LATENCY_QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99.9": 0.999, "p99.99": 0.9999, "max": 1.0}
MAX_TIMELINE_POINTS = 600
LOG_AXIS_RATIO = 20


@dataclass(frozen=True)
class Chart:
    chart_id: str
    title: str
    #: One sentence on what the chart shows and how it was aggregated.
    note: str
    #: {"data": [...traces], "layout": {...}}, ready for Plotly.newPlot.
    figure: dict[str, Any]


def _text(value: Any) -> str:
    return html.escape(str(value), quote=False)


def _figure(name: str) -> CaseValue:
    return lambda case: case.figures.get(name)


def _layout(x_title: str, y_title: str, **axes: Any) -> dict[str, Any]:
    """The chart's title is the report's heading above it, not drawn twice."""
    return {
        "xaxis": {"title": {"text": x_title}, **axes.get("xaxis", {})},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", **axes.get("yaxis", {})},
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.2, "yanchor": "top"},
        "margin": {"t": 20, "b": 50, "l": 60, "r": 20},
        "height": 440,
        **{k: v for k, v in axes.items() if k not in ("xaxis", "yaxis")},
    }


def _error_bars(spreads: list[Spread]) -> dict[str, Any]:
    """The repeats' min..max around the mean; invisible with one repeat each."""
    return {
        "type": "data",
        "symmetric": False,
        "array": [s.high - s.mean for s in spreads],
        "arrayminus": [s.mean - s.low for s in spreads],
        "visible": any(s.n > 1 for s in spreads),
    }


def _facet_groups(points: list[GridPoint], facets: tuple[str, ...]) -> dict[str, list[GridPoint]]:
    """The points split by their facet values; each group named by those values in words."""
    groups: dict[str, list[GridPoint]] = defaultdict(list)
    for point in points:
        groups[describe(point.params, [f for f in facets if f in point.params])].append(point)
    return groups


def _titled(base: str, facet: str) -> str:
    return f"{base}: {facet}" if facet else base


def _lines(
    points: list[GridPoint], x_param: str, value: CaseValue, *, chart_id: str, title: str, note: str, x_title: str,
    y_title: str,
) -> list[Chart]:
    """`value` against the parameter `x_param`, one line per combination of the other parameters
    that vary, one chart per facet; only lines with two x values or more."""
    usable = [p for p in points if isinstance(p.params.get(x_param), int | float) and p.value(value) is not None]
    charts: list[Chart] = []
    for facet, members in _facet_groups(usable, tuple(f for f in FACETS if f != x_param)).items():
        series: dict[str, list[GridPoint]] = defaultdict(list)
        for point, name in zip(members, point_names(members, [x_param, *FACETS]), strict=True):
            series[name].append(point)
        traces = []
        for name, line in series.items():
            if len({p.params[x_param] for p in line}) < 2:
                continue
            line.sort(key=lambda p: p.params[x_param])
            spreads = [s for s in (p.value(value) for p in line) if s is not None]
            traces.append({
                "type": "scatter", "mode": "lines+markers", "name": _text(name),
                "x": [p.params[x_param] for p in line], "y": [s.mean for s in spreads], "error_y": _error_bars(spreads),
            })
        if traces:
            xs = sorted({x for trace in traces for x in trace["x"]})
            x_axis: dict[str, Any] = {"tickvals": xs}
            if xs[0] > 0 and xs[-1] / xs[0] >= LOG_AXIS_RATIO:
                x_axis["type"] = "log"
            layout = _layout(x_title, y_title, xaxis=x_axis)
            charts.append(Chart(f"{chart_id}-{len(charts) + 1}", _titled(title, facet), note, {"data": traces, "layout": layout}))
    return charts


#: A case's side in a comparison of bars: (its place among the sides, its name), None: not compared.
Side = tuple[int, str] | None


def _compared(
    points: list[GridPoint], side_of: Callable[[dict[str, Any]], Side], ignored: set[str], *, chart_id: str,
    title: str, note: str,
) -> list[Chart]:
    """Requests/s of cases that differ only in the `ignored` parameters, one bar for each side
    (`side_of` a case's params); the sides after the first carry the change from the first. Only
    cases measured on the first side and on at least one other are shown."""
    by_rest: dict[str, dict[tuple[int, str], tuple[GridPoint, Spread]]] = defaultdict(dict)
    for point in points:
        rate, side = point.figure("requests_per_s"), side_of(point.params)
        if side is not None and rate is not None:
            rest = repr(sorted((k, repr(v)) for k, v in point.params.items() if k not in ignored))
            by_rest[rest][side] = (point, rate)
    compared = []
    for found in by_rest.values():
        first = min(found)
        if len(found) >= 2 and first[0] == 0:
            compared.append((found[first][0], found))
    charts: list[Chart] = []
    for facet, firsts in _facet_groups([point for point, _ in compared], ("group",)).items():
        chosen = [(point, found) for point, found in compared if point in firsts]
        names = [_text(n) for n in point_names([point for point, _ in chosen], [*ignored, "group"])]
        traces = []
        for side in sorted({side for _, found in chosen for side in found}):
            shown = [(name, found) for name, (_, found) in zip(names, chosen, strict=True) if side in found]
            rates = [found[side][1] for _, found in shown]
            trace = {"type": "bar", "name": side[1], "x": [name for name, _ in shown], "y": [s.mean for s in rates],
                     "error_y": _error_bars(rates)}
            if side[0] > 0:
                bases = [found[min(found)][1] for _, found in shown]
                trace |= {"text": [difference_text(b, r) if b.mean else "" for b, r in zip(bases, rates, strict=True)],
                          "textposition": "outside"}
            traces.append(trace)
        layout = _layout("", "requests/s", barmode="group")
        charts.append(Chart(f"{chart_id}-{len(charts) + 1}", _titled(title, facet), note, {"data": traces, "layout": layout}))
    return charts


def _pairs(
    points: list[GridPoint], param: str, sides: tuple[Any, Any], side_names: tuple[str, str], *, chart_id: str,
    title: str, note: str, across_groups: bool = False,
) -> list[Chart]:
    """Requests/s of cases that differ only in `param` (sides[0] vs sides[1]), side by side as bars;
    the second bar carries the change from the first. `across_groups`: cases of different groups
    pair too (a suite that puts its HTTPS cases in a group of their own)."""

    def side_of(params: dict[str, Any]) -> Side:
        value = params.get(param)
        return (sides.index(value), side_names[sides.index(value)]) if value in sides else None

    ignored = {param, "group"} if across_groups else {param}
    return _compared(points, side_of, ignored, chart_id=chart_id, title=title, note=note)


def throughput_vs_concurrency(points: list[GridPoint]) -> list[Chart]:
    return _lines(
        points, "connections", _figure("requests_per_s"), chart_id="throughput", title="Requests/s vs concurrency",
        note="Mean requests/s of the repeats at each concurrency, bars from the slowest to the fastest repeat.",
        x_title="connections", y_title="requests/s",
    )


def errors_vs_concurrency(points: list[GridPoint]) -> list[Chart]:
    """Nguyen's failed and timed-out share; only the charts in which some request failed."""
    found = _lines(
        points, "connections", lambda case: None if (share := error_share(case)) is None else 100 * share,
        chart_id="errors", title="Failed requests vs concurrency",
        note="Requests that ended in an error (connect, timeout, reset, ...) as a share of all that ended.",
        x_title="connections", y_title="failed requests (%)",
    )
    return [chart for chart in found if any(y > 0 for trace in chart.figure["data"] for y in trace["y"])]


def throughput_vs_rate(points: list[GridPoint]) -> list[Chart]:
    return _lines(
        points, "rate_per_s", _figure("requests_per_s"), chart_id="rate", title="Replies/s vs offered rate",
        note="Responses per second at each offered rate (constant-rate load, latency from the due time).",
        x_title="offered requests/s", y_title="replies/s",
    )


def worker_scaling(points: list[GridPoint]) -> list[Chart]:
    return _lines(
        points, "workers", _figure("requests_per_s"), chart_id="workers", title="Worker scaling",
        note="Requests/s as the server's worker processes (or threads) grow.",
        x_title="server workers", y_title="requests/s",
    )


def keepalive_comparison(points: list[GridPoint]) -> list[Chart]:
    return _pairs(
        points, "keepalive", (True, False), ("keep-alive", "new connection per request"), chart_id="keepalive",
        title="Keep-alive vs a new connection per request",
        note=(
            "Requests/s of the same case with persistent connections and with one connection per request; the label "
            "is the change, 'inside the spread' when it is no larger than the repeats' range (30 % when measured once)."
        ),
    )


def connection_handling(params: dict[str, Any]) -> Side:
    """HTTP/1.1 keep-alive first, then a new connection per request, then HTTP/2 by its streams."""
    if params.get("http_version") == "2":
        streams = params.get("streams", 1)
        return 2 + streams, f"HTTP/2, {streams} stream{'s' if streams != 1 else ''}/conn"
    if params.get("http_version") not in (None, "1.1"):
        return None
    return (0, "HTTP/1.1 keep-alive") if params.get("keepalive", True) else (1, "HTTP/1.1 new connection per request")


def http2_comparison(points: list[GridPoint]) -> list[Chart]:
    """The keep-alive view's HTTP/2 counterpart: shown only where some case spoke HTTP/2."""
    return _compared(
        points, connection_handling, {"keepalive", "http_version", "streams", "group"}, chart_id="http2",
        title="HTTP/1.1 keep-alive vs new connection vs HTTP/2",
        note=(
            "Requests/s of the same case over HTTP/1.1 with persistent connections, with one connection per request, "
            "and over HTTP/2 at each number of streams per connection; the labels are the change from HTTP/1.1 "
            "keep-alive, 'inside the spread' when no larger than the repeats' range (30 % when measured once)."
        ),
    ) if any(p.params.get("http_version") == "2" for p in points) else []


def https_penalty(points: list[GridPoint]) -> list[Chart]:
    return _pairs(
        points, "protocol", ("http", "https"), ("http", "https"), chart_id="https", title="HTTPS penalty",
        note=(
            "Requests/s of the same case over HTTP and over HTTPS; the label is the change HTTPS brings, 'inside the "
            "spread' when it is no larger than the repeats' range (30 % when measured once): no penalty measured."
        ),
        across_groups=True,
    )


def latency_percentiles(points: list[GridPoint]) -> list[Chart]:
    """Every point's latency spectrum, from its repeats' merged histograms (exact across repeats)."""
    charts: list[Chart] = []
    for facet, members in _facet_groups(points, ("group",)).items():
        traces = []
        for point, name in zip(members, point_names(members, ["group"]), strict=True):
            values_us = point.latency_percentiles_us(list(LATENCY_QUANTILES.values()))
            if values_us is not None:
                traces.append({
                    "type": "scatter", "mode": "lines+markers", "name": _text(name),
                    "x": list(LATENCY_QUANTILES), "y": [v / 1000 for v in values_us],
                })
        if traces:
            layout = _layout("percentile", "latency (ms)", yaxis={"type": "log", "dtick": "D2", "rangemode": "normal"})
            charts.append(Chart(
                f"latency-{len(charts) + 1}", _titled("Latency percentiles", facet),
                "Latency at each percentile, from the repeats' histograms merged (latency from the intended send).",
                {"data": traces, "layout": layout},
            ))
    return charts


def timelines(points: list[GridPoint]) -> list[Chart]:
    """Per second: requests/s and p99 latency of one case at a time, chosen from a menu; cases that
    lasted two seconds or more."""
    cases = [(name, case) for point, name in zip(points, point_names(points), strict=True) for case in point.measured
             if case.result and len(case.result["timeline"]) >= 2]
    if not cases:
        return []
    repeated = Counter(name for name, _ in cases)
    labels = [_text(name if repeated[name] == 1 else f"{name}, repeat {case.repeat}") for name, case in cases]
    traces = []
    for index, (label, (_, case)) in enumerate(zip(labels, cases, strict=True)):
        seconds = [s for s in (case.result["timeline"] if case.result else []) if s["span_us"] > 0]
        rate = lttb([(s["second"], s["responses"] * 1e6 / s["span_us"]) for s in seconds], MAX_TIMELINE_POINTS)
        p99 = lttb([(s["second"], s["p99_us"] / 1000) for s in seconds], MAX_TIMELINE_POINTS)
        for name, line, axis in ((f"{label}: requests/s", rate, "y"), (f"{label}: p99 (ms)", p99, "y2")):
            traces.append({"type": "scatter", "mode": "lines+markers", "name": name, "yaxis": axis, "visible": index == 0,
                           "x": [x for x, _ in line], "y": [y for _, y in line]})
    layout = _layout(
        "second of the measurement", "requests/s",
        yaxis2={"title": {"text": "p99 latency (ms)"}, "overlaying": "y", "side": "right", "rangemode": "tozero"},
    )
    if len(cases) > 1:
        layout["updatemenus"] = [{
            "type": "dropdown", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom",
            "buttons": [
                {"label": label, "method": "update", "args": [{"visible": [i // 2 == n for i in range(len(traces))]}]}
                for n, label in enumerate(labels)
            ],
        }]
        layout["margin"]["t"] = 60
    layout["margin"]["r"] = 70
    note = "Requests/s and p99 latency second by second"
    note += f", {len(cases)} cases (pick one in the menu)" if len(cases) > 1 else ""
    note += f"; long runs shown with at most {MAX_TIMELINE_POINTS} points (LTTB)."
    return [Chart("timeline-1", "Per-second timeline", note, {"data": traces, "layout": layout})]


VIEWS: tuple[Callable[[list[GridPoint]], list[Chart]], ...] = (
    throughput_vs_concurrency, keepalive_comparison, http2_comparison, worker_scaling, https_penalty, throughput_vs_rate,
    errors_vs_concurrency, latency_percentiles, timelines,
)


def all_charts(points: list[GridPoint]) -> list[Chart]:
    return [chart for view in VIEWS for chart in view(points)]

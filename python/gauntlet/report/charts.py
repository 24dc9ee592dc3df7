"""The studies' charts as Plotly figure dicts, built by pure functions from grid points.

Each view returns a list of charts, empty when the cases hold nothing for it (no concurrency that
varies, no keep-alive pair, ...), so the report shows only what the run measured. Every string that
comes from a case (parameters, names) is HTML-escaped here: Plotly renders tags in trace names and
axis labels.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from gauntlet.analysis.stats import Estimate
from gauntlet.report.downsample import lttb
from gauntlet.report.figure import (
    FACETS,
    Chart,
    base_layout,
    bars_note,
    error_bars,
    facet_groups,
    latency_unit,
    lines,
    make_chart,
    seconds_axis,
    text,
    titled,
)
from gauntlet.report.latency import latency_distribution, response_time_vs_concurrency, response_time_vs_rate
from gauntlet.report.points import (
    CaseValue,
    GridPoint,
    difference_text,
    kind_share,
    point_names,
    stored_figure,
    varying,
)
from gauntlet.servers.spec import SIZING
from gauntlet.store import CaseRow
from gauntlet.store.figures import ERROR_KINDS

MAX_TIMELINE_POINTS = 600


#: A case's side in a comparison of bars: (its place among the sides, its name), None: not compared.
Side = tuple[int, str] | None


def _compared(
    points: list[GridPoint], side_of: Callable[[dict[str, Any]], Side], ignored: set[str], *, chart_id: str,
    title: str, note: str,
) -> list[Chart]:
    """Requests/s of cases that differ only in the `ignored` parameters, one bar for each side
    (`side_of` a case's params); the sides after the first carry the change from the first. Only
    cases measured on the first side and on at least one other are shown."""
    by_rest: dict[str, dict[tuple[int, str], tuple[GridPoint, Estimate]]] = defaultdict(dict)
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
    for facet, firsts in facet_groups([point for point, _ in compared], ("group",)).items():
        chosen = [(point, found) for point, found in compared if point in firsts]
        names = [text(n) for n in point_names([point for point, _ in chosen], [*ignored, "group"])]
        traces = []
        for side in sorted({side for _, found in chosen for side in found}):
            shown = [(name, found) for name, (_, found) in zip(names, chosen, strict=True) if side in found]
            rates = [found[side][1] for _, found in shown]
            trace: dict[str, Any] = {"type": "bar", "orientation": "h", "name": side[1], "y": [name for name, _ in shown],
                     "x": [s.point for s in rates], "error_x": error_bars(rates)}
            if side[0] > 0:
                bases = [found[min(found)][1] for _, found in shown]
                trace |= {"text": [difference_text(b, r) if b.point else "" for b, r in zip(bases, rates, strict=True)],
                          "textposition": "outside", "textfont": {"size": BAR_LABEL_PX}, "cliponaxis": False}
            traces.append(trace)
        charts.append(make_chart(
            f"{chart_id}-{len(charts) + 1}", titled(title, facet), bars_note(note, traces), traces,
            _bar_layout(len(names), traces),
        ))
    return charts


#: Horizontal bars: each case's name on a line of its own at the left, whatever its length and
#: however many cases; the chart grows by BAR_ROW_PX for each bar, its labels in BAR_LABEL_PX type.
BAR_ROW_PX = 22
BAR_LABEL_PX = 12
#: Room right of the longest bar for its label ("+3% (no change detected)").
BAR_LABEL_ROOM = 1.35


def _bar_layout(cases: int, traces: list[dict[str, Any]]) -> dict[str, Any]:
    widest = max(x + high for trace in traces for x, high in zip(trace["x"], trace["error_x"]["array"], strict=True))
    layout = base_layout("requests/s", "", barmode="group", yaxis={"autorange": "reversed", "rangemode": "normal"},
                         xaxis={"range": [0, widest * BAR_LABEL_ROOM]})
    layout["height"] = max(layout["height"], 120 + cases * len(traces) * BAR_ROW_PX)
    return layout


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
    return lines(
        points, "connections", stored_figure("requests_per_s"), chart_id="throughput", title="Requests/s vs concurrency",
        note="Median requests/s of the repeats at each concurrency.",
        x_title="connections", y_title="requests/s",
    )


def errors_vs_concurrency(points: list[GridPoint]) -> list[Chart]:
    """Nguyen's failed and timed-out share; only the charts in which some request failed."""
    found = lines(
        points, "connections", lambda case: None if (share := case.figures.get("failed_share")) is None else 100 * share,
        chart_id="errors", title="Failed requests vs concurrency",
        note="Requests that ended in an error (connect, timeout, reset, ...) as a share of all that ended.",
        x_title="connections", y_title="failed requests (%)",
    )
    return _with_some_above_zero(found)


def throughput_vs_rate(points: list[GridPoint]) -> list[Chart]:
    return lines(
        points, "rate_per_s", stored_figure("requests_per_s"), chart_id="rate", title="Replies/s vs offered rate",
        note="Responses per second at each offered rate (constant-rate load, latency from the due time).",
        x_title="offered requests/s", y_title="replies/s",
    )


def worker_scaling(points: list[GridPoint]) -> list[Chart]:
    return lines(
        points, "workers", stored_figure("requests_per_s"), chart_id="workers", title="Worker scaling",
        note="Requests/s as the server's worker processes (or threads) grow.",
        x_title="server workers", y_title="requests/s",
    )


def keepalive_comparison(points: list[GridPoint]) -> list[Chart]:
    return _pairs(
        points, "keepalive", (True, False), ("keep-alive", "new connection per request"), chart_id="keepalive",
        title="Keep-alive vs a new connection per request",
        note=(
            "Requests/s of the same case with persistent connections and with one connection per request; the label "
            "is the change, with the verdict when no change is detected (docs/metrics.md: interval and noise floor)."
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
            "keep-alive, with the verdict when no change is detected (docs/metrics.md: interval and noise floor)."
        ),
    ) if any(p.params.get("http_version") == "2" for p in points) else []


def https_penalty(points: list[GridPoint]) -> list[Chart]:
    return _pairs(
        points, "protocol", ("http", "https"), ("http", "https"), chart_id="https", title="HTTPS penalty",
        note=(
            "Requests/s of the same case over HTTP and over HTTPS; the label is the change HTTPS brings, with the verdict "
            "when no change is detected (docs/metrics.md: interval and noise floor): no penalty measured."
        ),
        across_groups=True,
    )


def _per_second(case: CaseRow) -> list[dict[str, Any]]:
    """The case's seconds that have a span (a rate needs one)."""
    return [s for s in (case.result["timeline"] if case.result else []) if s["span_us"] > 0]


def timelines(points: list[GridPoint]) -> list[Chart]:
    """Per second: requests/s and p99 latency of one case at a time, chosen from a menu; cases that
    lasted two seconds or more."""
    cases = [(name, case) for point, name in zip(points, point_names(points), strict=True) for case in point.measured
             if case.result and len(case.result["timeline"]) >= 2]
    if not cases:
        return []
    repeated = Counter(name for name, _ in cases)
    labels = [text(name if repeated[name] == 1 else f"{name}, repeat {case.repeat}") for name, case in cases]
    divisor, unit = latency_unit([s["p99_us"] for _, case in cases for s in _per_second(case)])
    traces: list[dict[str, Any]] = []
    for index, (label, (_, case)) in enumerate(zip(labels, cases, strict=True)):
        seconds = _per_second(case)
        rate = lttb([(s["second"], s["responses"] * 1e6 / s["span_us"]) for s in seconds], MAX_TIMELINE_POINTS)
        p99 = lttb([(s["second"], s["p99_us"] / divisor) for s in seconds], MAX_TIMELINE_POINTS)
        for name, line, axis in ((f"{label}: requests/s", rate, "y"), (f"{label}: p99 ({unit})", p99, "y2")):
            traces.append({"type": "scatter", "mode": "lines+markers", "name": name, "yaxis": axis, "visible": index == 0,
                           "x": [x for x, _ in line], "y": [y for _, y in line]})
    layout = base_layout(
        "second of the measurement", "requests/s", xaxis=seconds_axis(max(x for trace in traces for x in trace["x"])),
        # tickmode auto: an overlaying axis would otherwise put its ticks at the first axis's gridlines (0.291, 0.583...).
        yaxis2={"title": {"text": f"p99 latency ({unit})"}, "overlaying": "y", "side": "right", "rangemode": "tozero",
                "tickmode": "auto", "showgrid": False},
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
    return [make_chart("timeline-1", "Per-second timeline", note, traces, layout)]


def _kind_share_pct(kind: str) -> CaseValue:
    share = kind_share(kind)
    return lambda case: None if (value := share(case)) is None else 100 * value


def _with_some_above_zero(charts: list[Chart]) -> list[Chart]:
    return [chart for chart in charts if any(y > 0 for trace in chart.figure["data"] for y in trace["y"])]


def error_kinds_vs_concurrency(points: list[GridPoint]) -> list[Chart]:
    """Nguyen's timed-out requests apart from other errors: one chart per error kind that occurred."""
    return [
        chart
        for kind in ERROR_KINDS
        for chart in _with_some_above_zero(lines(
            points, "connections", _kind_share_pct(kind), chart_id=f"errors-{kind.replace('_', '-')}",
            title=f"{kind.replace('_', ' ').capitalize()} errors vs concurrency",
            note=f"Requests that ended in the error '{kind}' (docs/results.md) as a share of all that ended.",
            x_title="connections", y_title=f"{kind.replace('_', ' ')} errors (% of requests)",
        ))
    ]


def _figure_vs_rate(name: str, chart_id: str, title: str, y_title: str, note: str) -> Callable[[list[GridPoint]], list[Chart]]:
    def view(points: list[GridPoint]) -> list[Chart]:
        return lines(points, "rate_per_s", stored_figure(name), chart_id=chart_id, title=title, note=note,
                      x_title="offered requests/s", y_title=y_title)

    view.__name__ = chart_id.replace("-", "_")
    return view


SYSTEM_NOTE = "Means of the repeats; system-wide counters count the whole machine."
#: The Deathmatch's system figures against the offered rate (sar's, in the paper).
RATE_SYSTEM_VIEWS = (
    _figure_vs_rate("server_cpu_percent", "rate-cpu", "Server CPU vs offered rate", "server CPU (% of one core)",
                    "The server's processes' CPU over the measured interval (200 % = two cores). " + SYSTEM_NOTE),
    _figure_vs_rate("server_load_1m", "rate-load", "Load average vs offered rate", "1-minute load average",
                    "/proc/loadavg at the end of the case. " + SYSTEM_NOTE),
    _figure_vs_rate("server_interrupts_per_request", "rate-interrupts", "Interrupts vs offered rate",
                    "interrupts per request", "/proc/stat intr over the measured interval, per request. " + SYSTEM_NOTE),
    _figure_vs_rate("server_system_context_switches_per_request", "rate-switches", "Context switches vs offered rate",
                    "context switches per request", "/proc/stat ctxt over the measured interval, per request. " + SYSTEM_NOTE),
    _figure_vs_rate("server_pages_freed_per_request", "rate-pages-freed", "Pages freed vs offered rate",
                    "pages freed per request", "/proc/vmstat pgfree over the measured interval, per request. " + SYSTEM_NOTE),
)


#: Nguyen's soak, Figs. 6-8: each per-second figure of the servers' timelines, overlaid.
OVER_TIME = (
    ("throughput", "Throughput over time", "requests/s"),
    ("latency", "Median latency over time", "median latency"),
    ("bandwidth", "Bandwidth over time", "received (MB/s)"),
)


def _second_value(key: str, second: dict[str, Any], latency_divisor: float) -> float:
    if key == "throughput":
        return float(second["responses"] * 1e6 / second["span_us"])
    if key == "latency":
        return float(second["p50_us"] / latency_divisor)
    return float(second["bytes_in"] / second["span_us"])  # bytes per µs = MB/s


#: The parameters that say which server (and how configured) measured a case.
SERVER_PARAMS = {"server", "backend", "backend_socket", *SIZING}


def servers_over_time(points: list[GridPoint]) -> list[Chart]:
    """Where the cases of a part of the study differ only in their server (a soak), each server's
    throughput, median latency and bandwidth second by second, one line per server (its first
    repeat). The timeline holds percentiles per second, not means: the median stands in for the
    paper's mean."""
    charts: list[Chart] = []
    for facet, members in facet_groups(points, FACETS).items():
        timed = [p for p in members if p.measured and len(_per_second(p.measured[0])) >= 2]
        if len(timed) < 2 or not set(varying(timed)) <= SERVER_PARAMS:
            continue
        seconds = {name: _per_second(p.measured[0]) for p, name in zip(timed, point_names(timed), strict=True)}
        divisor, unit = latency_unit([s["p50_us"] for line in seconds.values() for s in line])
        for key, title, y_title in OVER_TIME:
            traces = []
            for server, line in seconds.items():
                drawn = lttb([(s["second"], _second_value(key, s, divisor)) for s in line], MAX_TIMELINE_POINTS)
                traces.append({"type": "scatter", "mode": "lines+markers", "name": text(server),
                               "x": [x for x, _ in drawn], "y": [y for _, y in drawn]})
            shown_title = f"{y_title} ({unit})" if key == "latency" else y_title
            charts.append(make_chart(
                f"over-time-{key}-{len(charts) // len(OVER_TIME) + 1}", titled(title, facet),
                f"Second by second, each server's first repeat; long runs shown with at most {MAX_TIMELINE_POINTS} points (LTTB).",
                traces, base_layout("second of the measurement", shown_title, xaxis=seconds_axis(max(len(line) for line in seconds.values()))),
            ))
    return charts


VIEWS: tuple[Callable[[list[GridPoint]], list[Chart]], ...] = (
    throughput_vs_concurrency, response_time_vs_concurrency, keepalive_comparison, http2_comparison, worker_scaling, https_penalty,
    throughput_vs_rate, response_time_vs_rate, *RATE_SYSTEM_VIEWS, errors_vs_concurrency, error_kinds_vs_concurrency,
    latency_distribution, servers_over_time, timelines,
)


def all_charts(points: list[GridPoint]) -> list[Chart]:
    return [chart for view in VIEWS for chart in view(points)]

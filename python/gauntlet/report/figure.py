"""What every chart of the report is made of: the Chart, its layout, a legend that covers nothing,
a colour per series, error bars, axes with ticks a person would write, and lines of a figure
against a parameter, one chart per facet. Every string that comes from a case is HTML-escaped
here: Plotly renders tags in trace names and axis labels."""

from __future__ import annotations

import html
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from gauntlet.report.palette import colors
from gauntlet.analysis.stats import Estimate
from gauntlet.report.points import CaseValue, GridPoint, describe, point_names

#: The parameters that split a view into one chart each: lines are only drawn between cases that
#: agree on these (the same part of the study, the same file, the same connection handling).
FACETS = ("group", "workload", "path", "keepalive", "protocol", "model")
LOG_AXIS_RATIO = 20


@dataclass(frozen=True)
class Chart:
    chart_id: str
    title: str
    #: One sentence on what the chart shows and how it was aggregated.
    note: str
    #: {"data": [...traces], "layout": {...}}, ready for Plotly.newPlot.
    figure: dict[str, Any]


def text(value: Any) -> str:
    return html.escape(str(value), quote=False)


#: Where the legend sits: right of the plot, outside it (Plotly widens the margin to fit), so that
#: it covers neither the plot nor an axis title; further right when a second y axis has its ticks
#: and title there.
LEGEND = {"x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"}
LEGEND_BESIDE_Y2 = {**LEGEND, "x": 1.12}
#: Names longer than this would squeeze the plot beside them: the legend goes below it instead,
#: one name a row, the chart taller by as many rows (the plot keeps its height).
LEGEND_BESIDE_CHARS = 16
LEGEND_ROW_PX = 20
#: Below the plot, room for the x axis's ticks and title before the legend's first row.
X_AXIS_PX = 70
#: (largest value in µs below which the unit is used, divisor, unit): latency in the run's own units.
LATENCY_UNITS = ((1_000, 1, "µs"), (10_000_000, 1_000, "ms"), (float("inf"), 1_000_000, "s"))


def latency_unit(values_us: list[float]) -> tuple[float, str]:
    """(divisor, unit) that shows the largest of `values_us` with a few digits: µs below 1 ms, ms
    below 10 s, else s."""
    largest = max(values_us, default=0)
    return next((divisor, unit) for limit, divisor, unit in LATENCY_UNITS if largest < limit)


def base_layout(x_title: str, y_title: str, **axes: Any) -> dict[str, Any]:
    """The chart's title is the report's heading above it, not drawn twice."""
    return {
        "xaxis": {"title": {"text": x_title}, "automargin": True, **axes.get("xaxis", {})},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "automargin": True, **axes.get("yaxis", {})},
        "showlegend": True,
        "legend": LEGEND_BESIDE_Y2 if "yaxis2" in axes else LEGEND,
        "margin": {"t": 20, "b": 50, "l": 60, "r": 20},
        "height": 440,
        **{k: v for k, v in axes.items() if k not in ("xaxis", "yaxis")},
    }


def _legend_below(layout: dict[str, Any], rows: int) -> None:
    """The legend under the x axis's title, the chart as much taller as the rows need."""
    margin = layout["margin"]
    plot_px = layout["height"] - margin["t"] - margin["b"]
    margin["b"] = X_AXIS_PX + rows * LEGEND_ROW_PX
    layout["height"] = plot_px + margin["t"] + margin["b"]
    layout["legend"] = {"orientation": "v", "x": 0, "xanchor": "left", "y": -X_AXIS_PX / plot_px, "yanchor": "top"}


def make_chart(chart_id: str, title: str, note: str, traces: list[dict[str, Any]], layout: dict[str, Any]) -> Chart:
    """The chart with every series in a colour of its own (its line, markers and error bars: traces
    of one `legendgroup` are one series), and its legend where it covers nothing."""
    if any(len(html.unescape(trace["name"])) > LEGEND_BESIDE_CHARS for trace in traces):
        _legend_below(layout, sum(1 for trace in traces if trace.get("visible", True) and trace.get("showlegend", True)))
    series = list(dict.fromkeys(trace.get("legendgroup", str(index)) for index, trace in enumerate(traces)))
    color_of = dict(zip(series, colors(len(series)), strict=True))
    for index, trace in enumerate(traces):
        color = color_of[trace.get("legendgroup", str(index))]
        trace["marker"] = {**trace.get("marker", {}), "color": color}
        if trace["type"] == "scatter":
            trace["line"] = {**trace.get("line", {}), "color": color}
        for bars in ("error_x", "error_y"):
            if bars in trace:
                trace[bars] = {**trace[bars], "color": color}
    return Chart(chart_id, title, note, {"data": traces, "layout": layout})


def error_bars(estimates: list[Estimate]) -> dict[str, Any]:
    """The 95 % interval around the median (analysis.stats); invisible where no point has one."""
    return {
        "type": "data",
        "symmetric": False,
        "array": [e.high - e.point for e in estimates],
        "arrayminus": [e.point - e.low for e in estimates],
        "visible": any(e.has_interval and e.high > e.low for e in estimates),
    }


def facet_groups(points: list[GridPoint], facets: tuple[str, ...]) -> dict[str, list[GridPoint]]:
    """The points split by their facet values; each group named by those values in words."""
    groups: dict[str, list[GridPoint]] = defaultdict(list)
    for point in points:
        groups[describe(point.params, [f for f in facets if f in point.params])].append(point)
    return groups


def titled(base: str, facet: str) -> str:
    return f"{base}: {facet}" if facet else base


#: How a chart's caption ends: what its error bars are, or that there are none.
BARS_NOTE = "Bars: the 95 % interval (docs/metrics.md) where a case has one."
NO_BARS_NOTE = "No case has an interval (one short repeat each): no error bars."
#: The second value of a line (p50 beside p99) is drawn dashed, in the series' colour.
DASHES = ("solid", "dash", "dot")


def bars_note(note: str, traces: list[dict[str, Any]]) -> str:
    """The caption, saying whether the chart draws error bars (repeats) or not (single runs)."""
    drawn = any(trace.get(bars, {}).get("visible") for trace in traces for bars in ("error_x", "error_y"))
    return f"{note} {BARS_NOTE if drawn else NO_BARS_NOTE}"


def lines(
    points: list[GridPoint], x_param: str, value: CaseValue | dict[str, CaseValue], *, chart_id: str, title: str,
    note: str, x_title: str, y_title: str,
) -> list[Chart]:
    """`value` against the parameter `x_param`, one line per combination of the other parameters
    that vary, one chart per facet; only lines with two x values or more. Several values ({"p99":
    ..., "p50": ...}) are drawn in each series' colour, the first solid and in the legend, the next
    dashed (the axis title says which is which)."""
    values = value if isinstance(value, dict) else {"": value}
    first = next(iter(values.values()))
    usable = [p for p in points if isinstance(p.params.get(x_param), int | float) and p.value(first) is not None]
    charts: list[Chart] = []
    for facet, members in facet_groups(usable, tuple(f for f in FACETS if f != x_param)).items():
        series: dict[str, list[GridPoint]] = defaultdict(list)
        for point, name in zip(members, point_names(members, [x_param, *FACETS]), strict=True):
            series[name].append(point)
        traces: list[dict[str, Any]] = []
        for name, line in series.items():
            if len({p.params[x_param] for p in line}) < 2:
                continue
            line.sort(key=lambda p: p.params[x_param])
            for dash, (suffix, of) in zip(DASHES, values.items(), strict=False):
                shown = [(p.params[x_param], s) for p in line if (s := p.value(of)) is not None]
                trace: dict[str, Any] = {
                    "type": "scatter", "mode": "lines+markers", "name": text(f"{name} {suffix}".strip()),
                    "x": [x for x, _ in shown], "y": [s.point for _, s in shown], "error_y": error_bars([s for _, s in shown]),
                }
                if len(values) > 1:
                    trace |= {"legendgroup": text(name), "showlegend": dash == DASHES[0], "line": {"dash": dash}}
                traces.append(trace)
        if traces:
            xs = sorted({x for trace in traces for x in trace["x"]})
            x_axis: dict[str, Any] = {"tickvals": xs}
            if xs[0] > 0 and xs[-1] / xs[0] >= LOG_AXIS_RATIO:
                x_axis["type"] = "log"
            layout = base_layout(x_title, y_title, xaxis=x_axis)
            charts.append(make_chart(f"{chart_id}-{len(charts) + 1}", titled(title, facet), bars_note(note, traces), traces, layout))
    return charts


#: The mantissas of the ticks a person would write on a log axis, by how many decades it spans.
LOG_TICK_STEPS = ((4, (1, 2, 5)), (math.inf, (1,)))
LOG_AXIS_PAD = 0.04


def tick_text(value: float) -> str:
    """1, 20, 500, 2,000, 0.5, 0.02: no exponent, no trailing zeros."""
    return f"{value:,.0f}" if value >= 1 else f"{value:.6f}".rstrip("0").rstrip(".")


def log_axis(low: float, high: float) -> dict[str, Any]:
    """A log axis from `low` to `high` (> 0) with ticks at 1, 2, 5 x 10^k (fewer over many decades),
    labelled as written, never a minor tick printed as a decade."""
    low, high = max(low, 1e-9), max(high, low)
    decades = math.log10(high / low)
    steps = next(steps for span, steps in LOG_TICK_STEPS if decades <= span)
    values = [
        float(f"{mantissa}e{exponent}")  # 3e-1 is 0.3, where 3 * 10.0**-1 is 0.30000000000000004
        for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        for mantissa in steps
    ]
    below = max((v for v in values if v <= low), default=values[0])
    above = min((v for v in values if v >= high), default=values[-1])
    shown = [v for v in values if below <= v <= above]
    # A margin of LOG_AXIS_PAD of the span at each end: the lowest tick's label clears the x axis's.
    pad = LOG_AXIS_PAD * math.log10(above / below)
    return {"type": "log", "tickmode": "array", "tickvals": shown, "ticktext": [tick_text(v) for v in shown],
            "range": [math.log10(below) - pad, math.log10(above) + pad]}


#: Steps between ticks a person would write, in seconds: whole seconds, never 0.2 s of a 1-second run.
SECOND_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)
MAX_SECOND_TICKS = 10


def seconds_axis(last_s: float) -> dict[str, Any]:
    """An x axis of whole seconds from 0 to `last_s`, at most MAX_SECOND_TICKS ticks."""
    step = next((s for s in SECOND_STEPS if last_s / s <= MAX_SECOND_TICKS), SECOND_STEPS[-1])
    return {"tick0": 0, "dtick": step}

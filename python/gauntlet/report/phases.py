"""The phase view of arrival-phase runs (the thesis's load test, Fig. 4.28 and Fig. A.41): arrival
rate, pages/s, p99 and the server's CPU and memory second by second, one line per server, the
phases shaded; and the server's CPU and memory by role (web server, PHP workers, database).

Lines are drawn between servers that ran the same phases of the same load file: one chart pair
per load. Each server's line is its first measured repeat. The client's seconds count from the
start of the measurement; the monitor's samples are moved onto that clock by the warm-up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from gauntlet.report.figure import Chart, text
from gauntlet.report.downsample import lttb
from gauntlet.report.palette import colors
from gauntlet.report.points import GridPoint, point_names
from gauntlet.store import CaseRow

#: The panels of the phase view, top to bottom: (title, unit of the axis).
PANELS = (
    ("new users/s", "users/s"),
    ("pages/s", "pages/s"),
    ("p99 latency", "ms"),
    ("server CPU", "% of a core"),
    ("server memory (RSS)", "MB"),
)
ROLE_PANELS = (("CPU by role", "% of a core"), ("memory (RSS) by role", "MB"))
ROLE_DASHES = ("solid", "dot", "dash", "dashdot", "longdash")
PHASE_FILLS = ("#e8ebf0", "#d5d9e0")
MAX_POINTS = 600
PANEL_GAP = 0.03
LEGEND_DROP_PX = 75
MB = 1e6
Line = list[tuple[float, float]]


def _phased(case: CaseRow) -> bool:
    sessions = (case.result or {}).get("sessions") or {}
    return bool(sessions.get("phases"))


def first_phased(point: GridPoint) -> CaseRow | None:
    return next((case for case in point.measured if _phased(case)), None)


def _per_second(case: CaseRow, value: Callable[[dict[str, Any]], float]) -> Line:
    """A figure of the client's timeline at each second (its middle), per second of its span."""
    assert case.result is not None
    seconds = [s for s in case.result["timeline"] if s["span_us"] > 0]
    return lttb([(s["second"] + s["span_us"] / 2e6, value(s) * 1e6 / s["span_us"]) for s in seconds], MAX_POINTS)


def _p99_ms(case: CaseRow) -> Line:
    assert case.result is not None
    seconds = [s for s in case.result["timeline"] if s["span_us"] > 0 and s["responses"]]
    return lttb([(s["second"] + s["span_us"] / 2e6, s["p99_us"] / 1000) for s in seconds], MAX_POINTS)


def _server_points(case: CaseRow) -> tuple[float, list[dict[str, Any]]]:
    """The monitor's samples and the shift that puts them on the measurement's clock."""
    assert case.result is not None
    warmup_s = case.result["plan"].get("warmup_us", 0) / 1e6
    return warmup_s, (case.result.get("server") or {}).get("timeline", [])


def _server_line(case: CaseRow, value: Callable[[dict[str, Any]], float | None]) -> Line:
    warmup_s, samples = _server_points(case)
    found = [(p["t_s"] - warmup_s, value(p)) for p in samples]
    return lttb([(t, v) for t, v in found if v is not None], MAX_POINTS)


def _roles(case: CaseRow) -> list[str]:
    return sorted({role for point in _server_points(case)[1] for role in point.get("roles", {})})


def _role_value(role: str, name: str, scale: float = 1.0) -> Callable[[dict[str, Any]], float | None]:
    def read(point: dict[str, Any]) -> float | None:
        found = point.get("roles", {}).get(role)
        return None if found is None else found[name] / scale

    return read


def _axes(panels: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """Stacked y axes, the first panel on top, all on one x axis at the bottom."""
    height = (1 - PANEL_GAP * (len(panels) - 1)) / len(panels)
    axes: dict[str, Any] = {"xaxis": {"title": {"text": "second of the measurement"}, "anchor": f"y{len(panels)}"}}
    for index, (title, unit) in enumerate(panels):
        top = 1 - index * (height + PANEL_GAP)
        axes[f"yaxis{index + 1 if index else ''}"] = {
            "title": {"text": f"{title}<br>({unit})"}, "domain": [round(top - height, 4), round(top, 4)],
            "anchor": "x", "rangemode": "tozero",
        }
    return axes


def _phase_shapes(phases: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A shaded band per phase across every panel, and its label at the top."""
    shapes, labels = [], []
    for index, phase in enumerate(phases):
        start_s = phase["start_us"] / 1e6
        end_s = start_s + phase["duration_us"] / 1e6
        shapes.append({
            "type": "rect", "xref": "x", "yref": "paper", "x0": start_s, "x1": end_s, "y0": 0, "y1": 1,
            "fillcolor": PHASE_FILLS[index % len(PHASE_FILLS)], "opacity": 0.5, "layer": "below", "line": {"width": 0},
        })
        labels.append({
            "xref": "x", "yref": "paper", "x": (start_s + end_s) / 2, "y": 1, "yanchor": "bottom", "showarrow": False,
            "text": f"phase {index + 1}: {phase['users_per_s']:g}/s",
        })
    return shapes, labels


def _trace(name: str, line: Line, axis: int, colour: str, *, legend: bool, dash: str = "solid") -> dict[str, Any]:
    return {
        "type": "scatter", "mode": "lines+markers", "name": name, "legendgroup": name, "showlegend": legend,
        "x": [x for x, _ in line], "y": [y for _, y in line], "yaxis": f"y{axis if axis > 1 else ''}",
        "line": {"color": colour, "width": 1.5, "dash": dash}, "marker": {"size": 3, "color": colour},
    }


def _layout(panels: tuple[tuple[str, str], ...], phases: list[dict[str, Any]], height: int) -> dict[str, Any]:
    shapes, labels = _phase_shapes(phases)
    return {
        **_axes(panels), "shapes": shapes, "annotations": labels, "height": height, "showlegend": True,
        # Below the x axis's title, whatever the chart's height.
        "legend": {"orientation": "h", "y": -LEGEND_DROP_PX / height, "yanchor": "top"},
        "margin": {"t": 30, "b": 50, "l": 80, "r": 20},
        "hovermode": "x",
    }


def _phase_chart(index: int, title: str, named: list[tuple[str, CaseRow]], phases: list[dict[str, Any]]) -> Chart:
    traces = []
    # One colour per server, the same in every panel, none repeated however many servers.
    for colour, (name, case) in zip(colors(len(named)), named, strict=True):
        lines = (
            _per_second(case, lambda s: s["users_arrived"]),
            _per_second(case, lambda s: s["pages"]),
            _p99_ms(case),
            _server_line(case, lambda p: p["cpu_percent"]),
            _server_line(case, lambda p: p["rss_bytes"] / MB),
        )
        traces += [_trace(name, line, axis, colour, legend=axis == 1) for axis, line in enumerate(lines, 1)]
    note = (
        "Per second of the measurement, one line per server (its first repeat): users arriving, pages ended, "
        "p99 request latency, and the server's whole process tree (CPU from its cgroup or /proc, RSS summed); "
        "the arrival phases shaded."
    )
    return Chart(f"phases-{index}", title, note, {"data": traces, "layout": _layout(PANELS, phases, 900)})


def _role_chart(index: int, title: str, named: list[tuple[str, CaseRow]], phases: list[dict[str, Any]]) -> Chart:
    traces = []
    for colour, (name, case) in zip(colors(len(named)), named, strict=True):
        for role_number, role in enumerate(_roles(case)):
            label, dash = f"{name}: {text(role)}", ROLE_DASHES[role_number % len(ROLE_DASHES)]
            cpu = _server_line(case, _role_value(role, "cpu_percent"))
            rss = _server_line(case, _role_value(role, "rss_bytes", MB))
            traces += [_trace(label, cpu, 1, colour, legend=True, dash=dash), _trace(label, rss, 2, colour, legend=False, dash=dash)]
    note = (
        "The server's CPU and memory split by the role of each process (master, worker, backend: the PHP pool, "
        "database), from /proc; one colour per server, one dash per role."
    )
    return Chart(f"phase-roles-{index}", title, note, {"data": traces, "layout": _layout(ROLE_PANELS, phases, 560)})


def by_load(points: Iterable[GridPoint]) -> dict[str, list[GridPoint]]:
    """Points whose cases ran the same load file with the same phases: the ones a chart compares."""
    found: dict[str, list[GridPoint]] = defaultdict(list)
    for point in points:
        if first_phased(point) is not None:
            found[f"{point.params.get('load', '')} {point.params.get('phases', '')}"].append(point)
    return found


def phase_views(points: list[GridPoint]) -> list[Chart]:
    charts: list[Chart] = []
    for index, members in enumerate(by_load(points).values(), 1):
        cases = [first_phased(point) for point in members]
        named = [(text(name), case) for name, case in zip(point_names(members, ["group"]), cases, strict=True) if case]
        phases = named[0][1].result["sessions"]["phases"] if named[0][1].result else []
        load = text(members[0].params.get("load", "sessions"))
        charts.append(_phase_chart(index, f"Arrival phases: {load}", named, phases))
        if any(_roles(case) for _, case in named):
            charts.append(_role_chart(index, f"Arrival phases by role: {load}", named, phases))
    return charts


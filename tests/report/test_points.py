"""The report's pure arithmetic, in tables: spreads, names of cases, downsampling, noise, environments."""

from __future__ import annotations

import math

import pytest

from gauntlet.report.compare import change, verdict
from gauntlet.report.downsample import lttb
from gauntlet.report.points import DEFAULT_NOISE, GridPoint, Spread, describe, difference_text, noise, point_names, spread, varying


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], None),
        ([None, None], None),
        ([10.0], Spread(10.0, 10.0, 10.0, 1)),
        ([8, None, 12], Spread(10.0, 8.0, 12.0, 2)),
        ([90, 100, 110], Spread(100.0, 90.0, 110.0, 3)),
    ],
)
def test_spread(values: list[float | None], expected: Spread | None) -> None:
    assert spread(values) == expected


@pytest.mark.parametrize(
    ("value", "relative_range"), [(Spread(100, 90, 110, 3), 0.2), (Spread(5, 5, 5, 1), 0.0), (Spread(0, 0, 0, 2), 0.0)]
)
def test_relative_range(value: Spread, relative_range: float) -> None:
    assert math.isclose(value.relative_range, relative_range)


@pytest.mark.parametrize(
    ("params", "names", "words"),
    [
        ({"server": "nginx", "workers": 2, "keepalive": True, "connections": 100}, None, "nginx, 2 workers, keep-alive, 100 conns"),
        ({"server": "nginx", "workers": 1, "connections": 1}, None, "nginx, 1 worker, 1 conn"),
        ({"keepalive": False, "protocol": "https", "tls_version": "1.2"}, None, "https, TLS 1.2, no keep-alive"),
        ({"model": "rate", "rate_per_s": 2500.0, "path": "/hello.php"}, None, "/hello.php, rate, 2500/s"),
        ({"server": "h2o", "color": "blue", "workers": None}, None, "h2o, color=blue"),
        ({"rate_per_s": "fast", "duration_s": 0.5}, None, "fast/s, 0.5 s"),
        ({"server": "nginx", "workers": 4, "connections": 10}, ["connections"], "10 conns"),
    ],
)
def test_describe(params: dict[str, object], names: list[str] | None, words: str) -> None:
    assert describe(params, params if names is None else names) == words


def points(*params: dict[str, object]) -> list[GridPoint]:
    return [GridPoint(key=str(p), params=dict(p)) for p in params]


def test_varying_and_point_names_keep_only_what_tells_cases_apart() -> None:
    grid = points(
        {"server": "nginx", "workers": 2, "connections": 10},
        {"server": "nginx", "workers": 4, "connections": 10},
        {"server": "lighttpd", "connections": 10},
    )
    assert varying(grid) == ["server", "workers"]
    assert point_names(grid) == ["nginx, 2 workers", "nginx, 4 workers", "lighttpd"]
    assert point_names(grid, ["workers"]) == ["nginx", "nginx", "lighttpd"]
    alike = {"server": "nginx", "path": "/webtest.html", "connections": 10}
    assert point_names(points(alike, alike)) == ["nginx, /webtest.html"] * 2


def test_lttb_keeps_the_ends_and_the_spike() -> None:
    line = [(float(x), 100.0) for x in range(1000)]
    line[537] = (537.0, 5000.0)
    kept = lttb(line, 50)
    assert len(kept) == 50
    assert kept[0] == line[0] and kept[-1] == line[-1] and (537.0, 5000.0) in kept
    assert [x for x, _ in kept] == sorted(x for x, _ in kept)


@pytest.mark.parametrize(("length", "threshold"), [(0, 10), (5, 10), (10, 10), (10, 2)])
def test_lttb_leaves_short_lines_alone(length: int, threshold: int) -> None:
    line = [(float(x), float(x * x)) for x in range(length)]
    assert lttb(line, threshold) == line


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (Spread(100, 100, 100, 1), Spread(90, 90, 90, 1), DEFAULT_NOISE),
        (Spread(100, 95, 105, 3), Spread(90, 90, 90, 1), 0.1),
        (Spread(100, 95, 105, 3), Spread(90, 81, 99, 3), 0.2),
    ],
)
def test_noise_is_the_runs_own_spread_or_the_default(before: Spread, after: Spread, expected: float) -> None:
    assert math.isclose(noise(before, after), expected)


@pytest.mark.parametrize(
    ("figure", "before", "after", "regression"),
    [
        ("requests_per_s", Spread(100, 100, 100, 1), Spread(60, 60, 60, 1), True),
        ("requests_per_s", Spread(100, 100, 100, 1), Spread(80, 80, 80, 1), False),
        ("requests_per_s", Spread(100, 100, 100, 1), Spread(200, 200, 200, 1), False),
        ("requests_per_s", Spread(100, 99, 101, 2), Spread(95, 94, 96, 2), True),
        ("latency_p99_us", Spread(1000, 1000, 1000, 1), Spread(1400, 1400, 1400, 1), True),
        ("latency_p99_us", Spread(1000, 1000, 1000, 1), Spread(500, 500, 500, 1), False),
        ("server_cpu_us_per_request", Spread(10, 5, 15, 2), Spread(14, 13, 15, 2), False),
    ],
)
def test_a_regression_goes_the_bad_way_beyond_the_noise(figure: str, before: Spread, after: Spread, regression: bool) -> None:
    found = change(figure, before, after)
    assert found is not None and found.regression is regression


def test_no_change_without_a_baseline() -> None:
    assert change("requests_per_s", None, Spread(1, 1, 1, 1)) is None
    assert change("latency_p99_us", Spread(0, 0, 0, 1), Spread(1, 1, 1, 1)) is None




def test_a_difference_inside_the_spread_is_said_to_be() -> None:
    once = Spread(100, 100, 100, 1)
    assert difference_text(once, Spread(120, 120, 120, 1)) == "+20% (inside the spread)"
    assert difference_text(once, Spread(140, 140, 140, 1)) == "+40%"
    repeated = Spread(100, 95, 105, 3)
    assert difference_text(repeated, Spread(112, 110, 114, 3)) == "+12%", "beyond a 10 % range"
    assert difference_text(repeated, Spread(92, 91, 93, 3)) == "-8% (inside the spread)"
    changes = [change("requests_per_s", once, Spread(after, after, after, 1)) for after in (80, 60, 140)]
    assert [verdict(c) for c in changes if c is not None] == [
        "inside the spread", "REGRESSION", "better",
    ]

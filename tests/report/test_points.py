"""The report's pure arithmetic, in tables: estimates of points, names of cases, downsampling, change labels."""

from __future__ import annotations

import pytest

from gauntlet.analysis import stats
from gauntlet.report.downsample import lttb
from gauntlet.report import views
from gauntlet.report.points import GridPoint, describe, difference_text, point_names, varying
from gauntlet.servers.spec import SIZING
from gauntlet.store import CaseRow


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
        ({"server": "builtin", "processes": 1, "keepalive_requests": 0}, None, "builtin, 1 process, unlimited requests/conn"),
        (
            {"server": "apache-event", "backend": "uwsgi", "backend_threads": 2, "keepalive_timeout_s": 5},
            None,
            "apache-event, keep-alive timeout 5 s, 2 backend threads/process, uwsgi",
        ),
    ],
)
def test_describe(params: dict[str, object], names: list[str] | None, words: str) -> None:
    assert describe(params, params if names is None else names) == words


def test_every_server_sizing_setting_has_words() -> None:
    """A setting added to servers.spec.SIZING is named in words in every case label, not as name=value."""
    assert [name for name in SIZING if "=" in describe({name: 3}, [name])] == []


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


def once(value: float) -> stats.Estimate:
    found = stats.estimate("requests_per_s", [value])
    assert found is not None
    return found


def test_a_change_label_says_when_no_change_is_detected() -> None:
    """Against the default 85 % floor for requests/s, measured once (no interval: the floor stands in)."""
    assert difference_text(once(100), once(140)) == "+40% (no change detected)"
    assert difference_text(once(100), once(200)) == "+100%"
    assert difference_text(once(100), once(50)) == "-50%"
    tight = stats.Estimate(100, 99, 101, 10, stats.BATCH_MEANS)
    assert difference_text(tight, stats.Estimate(110, 109, 111, 10, stats.BATCH_MEANS)) == "+10% (within noise)"


def measured_point(rates: list[float], responses: int, seconds: int = 0) -> GridPoint:
    """A point whose repeats have these requests/s and responses, each with `seconds` of timeline."""
    from gauntlet.store import CaseRow

    second = {"span_us": 1_000_000, "requests": 100, "responses": 100, "errors": 0, "p50_us": 50, "p90_us": 90, "p99_us": 99}
    point = GridPoint("k", {})
    for repeat, rate in enumerate(rates):
        timeline = [dict(second, responses=100 + (i % 2) * 10) for i in range(seconds)]
        point.measured.append(CaseRow(
            repeat, 1, "k", repeat, {}, "ok", None, None, None, None, None, None, None, None, [], [], None, 0, 0,
            {"requests_per_s": rate, "responses": responses, "latency_p99_us": 1_000}, {"timeline": timeline},
        ))
    return point


def test_a_points_estimate_bootstraps_its_repeats_or_batches_its_seconds() -> None:
    repeated = measured_point([90.0, 100.0, 110.0], 5_000).estimate("requests_per_s")
    assert repeated is not None and (repeated.point, repeated.method, repeated.n) == (100.0, "bootstrap over repeats", 3)
    once = measured_point([105.0], 5_000, seconds=10).estimate("requests_per_s")
    assert once is not None and once.method == "batch means over seconds" and once.low < 105.0 < once.high


def test_a_points_percentile_needs_enough_responses_in_every_repeat() -> None:
    assert measured_point([100.0], 1_000).estimate("latency_p99_us") is not None
    few = measured_point([100.0], 999)
    assert few.estimate("latency_p99_us") is None and few.unshown("latency_p99_us") == "n too small (p99 needs 1,000 responses a repeat)"
    assert few.estimate("requests_per_s") is not None


def test_point_ratio_relates_two_points_with_an_interval() -> None:
    from gauntlet.report.points import point_ratio

    fast, slow = measured_point([200.0, 210.0, 190.0], 5_000), measured_point([100.0, 105.0, 95.0], 5_000)
    found = point_ratio(fast, slow, "requests_per_s")
    assert found is not None and found.point == 2.0 and found.low < 2.0 < found.high
    assert point_ratio(fast, GridPoint("empty", {}), "requests_per_s") is None


def test_a_level_whose_server_stalled_is_an_invalid_probe() -> None:
    """A capacity probe stored as an error (no request ended: the server stalled) is the first
    invalid level, as the search counted it, not a level left out of the table ("none failed")."""

    def probe(users: int, result: dict[str, object] | None) -> CaseRow:
        status, error = ("ok", None) if result else ("error", "server-stalled: no request ended")
        return CaseRow(users, 1, f"u{users}", 0, {"users": users}, status, None, None, None, None, None, None, None, None,
                       [], [], error, 0, 0, {}, result)

    valid = {"sessions": {"pages": []}, "qos": {"valid": True}}
    points = [GridPoint(f"u{users}", {"users": users}) for users in (40, 80)]
    points[0].measured.append(probe(40, valid))
    points[1].failed.append(probe(80, None))
    assert [views.probe_valid(point) for point in points] == [True, False]
    assert views.probe_valid(GridPoint("none", {"users": 1})) is None
    assert views.capacity_table(points).rows == [["all cases", "40 valid, 80 invalid", "40", "80"]]


def test_a_level_after_which_the_server_stopped_answering_is_marked() -> None:
    def probe(users: int, qos: dict[str, object]) -> CaseRow:
        return CaseRow(users, 1, f"u{users}", 0, {"users": users}, "ok", None, None, None, None, None, None, None, None,
                       [], [], None, 0, 0, {}, {"sessions": {"pages": []}, "qos": qos})

    points = [GridPoint(f"u{users}", {"users": users}) for users in (40, 80, 60)]
    for point, qos in zip(points, [{"valid": True}, {"valid": False, "server_answered_after": False},
                                   {"valid": False, "server_answered_after": True}], strict=True):
        point.measured.append(probe(point.params["users"], qos))
    assert views.capacity_table(points).rows == [
        ["all cases", "40 valid, 60 invalid, 80 invalid (server stopped answering)", "40", "60"]
    ]

"""Suite files: the grid each one expands to, the blocks that share a server, the quick variant,
and every mistake reported with its file, line and field before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.model.record import case_key
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite, shipped_names

SUITE = """\
name: small
servers:
  - builtin
  - kind: nginx
    workers: 2
defaults:
  threads: 2
groups:
  - name: static
    workload: [ST-1, ST-3]
    keepalive: [true, false]
    connections: [1, 10, 100]
    requests: 10k
  - name: scaling
    servers: [nginx]
    workers: {from: 1, to: 4, step: 1}
    path: /webtest.html
    connections: 50
    duration: 2s
  - name: rates
    model: rate
    workload: DM
    rate_per_s: {from: 1000, to: 3000, step: 1000}
    calls_per_connection: 10
    duration: 1s
quick:
  static:
    connections: [10]
    requests: 1k
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def test_the_grid_expands_into_blocks_that_share_a_server(tmp_path: Path) -> None:
    loaded = load_suite(str(write(tmp_path, SUITE)))
    blocks = expand(loaded.suite, ["builtin", "nginx"], tmp_path)
    cases = [case for block in blocks for case in block.cases]
    # static: 2 servers x 2 pages x 2 keep-alive x 3 levels; scaling: 4 worker counts; rates: 2 servers x 3 rates.
    assert len(cases) == 24 + 4 + 6
    assert len({case_key(case.params) for case in cases}) == len(cases), "every grid point has its own key"
    specs = [block.server for block in blocks]
    assert len(specs) == len(set(specs)), "a server configuration starts once"
    # The built-in server has no keep-alive switch (it closes when the client asks): one configuration.
    assert [spec.kind for spec in specs] == ["builtin"] + ["nginx"] * 5, "blocks follow the suite's server order"
    builtin_cases = blocks[0].cases
    assert {c.params["keepalive"] for c in builtin_cases} == {True, False} and blocks[0].server.keepalive
    nginx_w2 = next(block for block in blocks if block.server.kind == "nginx" and block.server.workers == 2 and block.server.keepalive)
    groups = [case.group for case in nginx_w2.cases]
    assert groups == ["static"] * 6 + ["scaling"] + ["rates"] * 3, "groups on the same server share its block"


def test_case_params_and_plans_say_what_runs(tmp_path: Path) -> None:
    blocks = expand(load_suite(str(write(tmp_path, SUITE))).suite, ["nginx"], tmp_path)
    cases = {(c.group, c.params.get("connections"), c.params.get("rate_per_s"), c.params.get("workers"), c.params["keepalive"], c.path): c for b in blocks for c in b.cases}
    static = cases[("static", 100, None, 2, False, "/image_large.jpg")]
    assert static.params == {
        "group": "static", "server": "nginx", "workers": 2, "keepalive": False, "protocol": "http",
        "path": "/image_large.jpg", "workload": "ST-3", "model": "closed", "connections": 100, "requests": 10_000,
    }
    assert static.plan is not None
    # What the suite leaves out (timeout, warm-up) is the engine's default.
    assert static.plan.engine_json() == {
        "url": "", "connections": 100, "threads": 2, "requests": 10_000, "keepalive": False, "http_version": "1.1",
    }
    scaling = cases[("scaling", 50, None, 3, True, "/webtest.html")]
    assert (scaling.server.workers, scaling.plan.duration_us, scaling.plan.requests) == (3, 2_000_000, None)
    rate = cases[("rates", 50, 2000.0, 2, True, "/image_10k.png")]
    assert (rate.plan.rate_per_s, rate.plan.calls_per_connection, rate.params["model"]) == (2000.0, 10, "rate")


def test_the_quick_variant_replaces_the_groups_fields(tmp_path: Path) -> None:
    loaded = load_suite(str(write(tmp_path, SUITE)), quick=True)
    static = [c for b in expand(loaded.suite, ["builtin"], tmp_path) for c in b.cases if c.group == "static"]
    assert static and all(c.plan is not None for c in static)
    assert {(c.plan.connections, c.plan.requests) for c in static if c.plan is not None} == {(10, 1000)}
    assert loaded.quick and loaded.text == (tmp_path / "suite.yaml").read_text()


def test_a_zero_warmup_turns_the_warmup_off(tmp_path: Path) -> None:
    text = SUITE.replace("defaults:\n  threads: 2\n", "defaults:\n  threads: 2\n  warmup: 1s\n")
    text = text.replace("    duration: 2s\n", "    duration: 2s\n    warmup: 0s\n")
    blocks = expand(load_suite(str(write(tmp_path, text))).suite, ["builtin", "nginx"], tmp_path)
    warmups = {case.params["group"]: case.plan.warmup_us for block in blocks for case in block.cases}
    assert warmups == {"static": 1_000_000, "scaling": 0, "rates": 1_000_000}


def test_the_http2_suite_serves_http2_only_in_its_http2_cases() -> None:
    loaded = load_suite("http2", quick=True)
    blocks = expand(loaded.suite, ["nginx"], loaded.path.parent)
    cases = [case for block in blocks for case in block.cases]
    http2 = [case for case in cases if case.plan is not None and case.plan.http_version == "2"]
    http1 = [case for case in cases if case not in http2]
    # 3 pages: HTTP/1.1 with and without keep-alive, HTTP/2 at 1, 10 and 100 streams per connection.
    assert (len(http1), len(http2)) == (3 * 2, 3 * 3)
    assert all(case.server.http2 and case.server.tls for case in http2)
    assert all(not case.server.http2 and case.server.tls for case in http1)
    assert sorted({case.plan.streams_per_connection for case in http2 if case.plan}) == [1, 10, 100]
    assert {case.params["streams"] for case in http2} == {1, 10, 100} and not any("streams" in c.params for c in http1)
    assert all(case.params["http_version"] == "2" and "http2" not in case.params for case in http2)
    assert len({case_key(case.params) for case in cases}) == len(cases)
    assert {block.server.http2 for block in blocks} == {True, False}, "HTTP/1.1 cases run on a server without HTTP/2"


SESSIONS_OVER_HTTP2 = """\
name: shop
servers: [nginx]
groups:
  - name: shop
    model: sessions
    load: banking-like
    users: [10]
    protocol: [https]
    http_version: ["1.1", "2"]
"""


def test_a_sessions_group_runs_over_http1_and_http2_as_two_cases(tmp_path: Path) -> None:
    loaded = load_suite(str(write(tmp_path, SESSIONS_OVER_HTTP2)))
    cases = [case for block in expand(loaded.suite, ["nginx"], tmp_path) for case in block.cases]
    assert len({case_key(case.params) for case in cases}) == 2
    by_version = {case.params.get("http_version", "1.1"): case for case in cases}
    for version, case in by_version.items():
        assert case.sessions is not None and case.server.http2 == (version == "2")
        assert case.sessions.plan(case.params, "https://127.0.0.1:1/").http_version == (None if version == "1.1" else "2")
    with pytest.raises(GauntletError, match="a sessions group takes no streams: over HTTP/2 each user's page and images"):
        load_suite(str(write(tmp_path, SESSIONS_OVER_HTTP2 + "    streams: [10]\n")))


def test_servers_not_asked_for_are_left_out(tmp_path: Path) -> None:
    blocks = expand(load_suite(str(write(tmp_path, SUITE))).suite, ["builtin"], tmp_path)
    assert {block.server.kind for block in blocks} == {"builtin"}


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        (("  - builtin\n", "  - nginix\n"), 3, "servers.0.kind", "'nginix' is not a server kind"),
        (("connections: [1, 10, 100]", "connections: [1, ten, 100]"), 12, "groups.0.connections.1", "'ten' is not a count"),
        (("connections: [1, 10, 100]", "connections: [0]"), 12, "groups.0.connections.0", "at least 1, not 0"),
        (("workload: [ST-1, ST-3]", "workload: [ST-9]"), 10, "groups.0.workload", "'ST-9' is not a workload"),
        (("    duration: 2s\n", "    duration: 2\n"), 19, "groups.1.duration", "has no unit"),
        (("    duration: 2s\n", "    duration: 0s\n"), 19, "groups.1.duration", "at least 1us, not 0s"),
        (("step: 1}", "step: 0}"), 16, "groups.1.workers", "positive step"),
        (("    servers: [nginx]\n", "    servers: [lighttpd]\n"), 1, "(top)", "which the suite's servers do not list"),
        (("    connections: [10]\n", "    connections: [-1]\n"), 28, "groups.0.connections.0", "at least 1, not -1"),
        (("  static:\n", "  statik:\n"), 1, "(top)", "quick names the group 'statik'"),
        (("    requests: 10k\n", "    requests: 10k\n    colour: red\n"), 14, "groups.0.colour", "Extra inputs"),
        (("    model: rate\n", ""), 20, "groups.2", "rate_per_s belongs to a rate group"),
        (("    connections: [1, 10, 100]\n", "    connections: [1, 10, 100]\n    backend: [php-fmp]\n"), 13, "groups.0.backend", "'php-fmp' is not a backend"),
        (("workload: [ST-1, ST-3]", "workload: [ST-1, DT-1]"), 9, "groups.0", "DT-1 (/hello.php) needs a backend that serves it, not None"),
        (("workload: [ST-1, ST-3]\n", "workload: [DT-2]\n    backend: [php-fpm]\n"), 9, "groups.0", "DT-2 (/page.py) needs a backend"),
        (("    requests: 10k\n", "    requests: 10k\n    streams: [10]\n"), 9, "groups.0", "streams are HTTP/2's"),
    ],
)
def test_mistakes_name_the_file_line_and_field(tmp_path: Path, change: tuple[str, str], line: int, field: str, message: str) -> None:
    assert change[0] in SUITE
    path = write(tmp_path, SUITE.replace(*change))
    with pytest.raises(GauntletError) as raised:
        load_suite(str(path))
    cause = raised.value.cause
    assert cause.startswith(f"{path}:{line}: {field}: "), cause
    assert message in cause and "\n" not in str(raised.value)


def test_yaml_syntax_and_unknown_names(tmp_path: Path) -> None:
    path = write(tmp_path, SUITE.replace("connections: [1, 10, 100]", "connections: [1, 10, 100"))
    with pytest.raises(GauntletError, match=rf"^{path}:1[0-9]: YAML syntax"):
        load_suite(str(path))
    with pytest.raises(GauntletError, match="there is no suite 'thesys'.*Name a shipped suite"):
        load_suite("thesys")


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("quick", [False, True])
def test_every_shipped_suite_loads_and_expands(name: str, quick: bool) -> None:
    loaded = load_suite(name, quick)
    kinds = [entry.kind for entry in loaded.suite.servers]
    blocks = expand(loaded.suite, kinds, loaded.path.parent)
    assert blocks and all(block.cases for block in blocks)


#: A quick case is still a measurement: long enough for the monitor's readings (docs/metrics.md,
#: Invariants) and for a rate that one burst cannot make.
QUICK_MEASURED_US = 2_000_000


@pytest.mark.parametrize("name", shipped_names())
def test_every_quick_case_is_bounded_by_at_least_2_s(name: str) -> None:
    loaded = load_suite(name, quick=True)
    cases = [case for block in expand(loaded.suite, [e.kind for e in loaded.suite.servers], loaded.path.parent) for case in block.cases]
    for case in cases:
        if case.plan is not None:
            plan = case.plan
        else:
            assert case.sessions is not None
            plan = case.sessions.load.to_plan("http://127.0.0.1:1/", "https://127.0.0.1:2/")
        assert plan.requests is None, f"{case.group} is bounded by a count"
        # Arrival phases bound a sessions plan by their durations, not by duration_us.
        phases = plan.sessions.phases if plan.sessions is not None else None
        measured_us = plan.duration_us if phases is None else sum(phase.duration_us for phase in phases)
        assert measured_us is not None and measured_us >= QUICK_MEASURED_US, case.group


def test_a_pinned_batch_window_reaches_every_case_and_its_key(tmp_path: Path) -> None:
    """Without `io_batch` each case's warm-up decides the client's window; `defaults.io_batch` pins it
    for every case, and the pinned window is part of the case's identity."""
    pinned = SUITE.replace("defaults:\n  threads: 2\n", "defaults:\n  threads: 2\n  io_batch: 200us\n")
    for text, window_us in ((pinned, 200), (SUITE, None)):
        blocks = expand(load_suite(str(write(tmp_path, text))).suite, ["builtin", "nginx"], tmp_path)
        found = [case for block in blocks for case in block.cases]
        assert {case.plan.io_batch_us for case in found if case.plan is not None} == {window_us}
        assert {case.params.get("io_batch_us") for case in found} == {window_us}
    with pytest.raises(GauntletError, match="io_batch"):
        load_suite(str(write(tmp_path, SUITE.replace("defaults:\n  threads: 2\n", "defaults:\n  threads: 2\n  io_batch: 20ms\n"))))

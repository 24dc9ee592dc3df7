"""The keep-alive view's HTTP/2 counterpart, from a suite measured for it: on one server, HTTP/1.1
with keep-alive, with a new connection per request, and HTTP/2 at 1 and 10 streams per connection
over HTTPS; every case says what it negotiated. nginx keeps its connections as long as the client
does (it would end an HTTP/2 connection with GOAWAY after 1,000 streams)."""

from __future__ import annotations


import pytest

from gauntlet.report import charts
from gauntlet.report.points import grid_points
from gauntlet.servers.spec import ServerSpec
from gauntlet.store import CaseRow, Store
from tests.conftest import require_available
from tests.helpers.cli_process import run_cli

SUITE = """\
name: h2-view
servers: [{kind: nginx, keepalive_requests: 0}]
defaults: {threads: 1, connections: 4}
groups:
  - name: http1
    workload: [ST-1]
    protocol: [https]
    keepalive: [true, false]
    duration: 1s
  - name: http2
    workload: [ST-1]
    protocol: [https]
    http_version: ["2"]
    streams: [1, 10]
    duration: 1s
"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> list[CaseRow]:
    require_available(ServerSpec("nginx"))
    tmp = tmp_path_factory.mktemp("h2-view")
    (tmp / "h2-view.yaml").write_text(SUITE)
    db = tmp / "results.db"
    done = run_cli("suite", "run", tmp / "h2-view.yaml", "--db", db, "-o", tmp / "report.html", timeout_s=180)
    assert done.code == 0, done.stderr[-3000:]
    with Store.open(db, create=False) as store:
        return store.cases([store.latest_run_id()])


def test_each_case_says_what_it_negotiated(measured: list[CaseRow]) -> None:
    assert len(measured) == 4 and all(case.result for case in measured)
    for case in measured:
        assert case.result is not None
        negotiated = case.result["negotiated"]
        http2 = case.params.get("http_version") == "2"
        assert negotiated["protocol"] == ("h2" if http2 else "http/1.1")
        assert negotiated["streams_per_connection"] == (case.params["streams"] if http2 else 1)
        assert negotiated["tls_version"] and negotiated["tls_cipher"]
        assert case.result["errors_total"] == 0 and case.result["responses"] > 0


def test_the_view_puts_http1_and_http2_side_by_side(measured: list[CaseRow]) -> None:
    (chart,) = charts.http2_comparison(grid_points(measured))
    traces = chart.figure["data"]
    assert [trace["name"] for trace in traces] == [
        "HTTP/1.1 keep-alive", "HTTP/1.1 new connection per request", "HTTP/2, 1 stream/conn", "HTTP/2, 10 streams/conn",
    ]
    rate = {
        (case.params.get("http_version", "1.1"), case.params["keepalive"], case.params.get("streams")):
            case.figures["requests_per_s"] for case in measured
    }
    expected = [rate[("1.1", True, None)], rate[("1.1", False, None)], rate[("2", True, 1)], rate[("2", True, 10)]]
    assert [trace["x"] for trace in traces] == [[y] for y in expected]
    assert "text" not in traces[0] and all(trace["text"][0].startswith(("+", "-")) for trace in traces[1:])
    assert charts.http2_comparison(grid_points([c for c in measured if c.params.get("http_version") != "2"])) == []

"""The live server alone, fed a real case (the built-in server measured for 2 s) as the lab's feed
would: the address it takes, what /state and /metrics answer, and that its port closes."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from gauntlet.cli.watching import with_default_address
from gauntlet.errors import GauntletError
from gauntlet.lab.case import measure
from gauntlet.live.observer import LiveObserver
from gauntlet.live.server import parse_address
from gauntlet.model.record import CaseRecord
from gauntlet.plan import Plan
from gauntlet.servers.base import ServerInstance

PARAMS = {"server": "builtin", "workers": 2, "path": "/webtest.html", "connections": 4, "duration_s": 2}


def get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.headers["Content-Type"], answer.read()


@pytest.fixture(scope="module")
def measured_case(module_builtin: ServerInstance) -> CaseRecord:
    plan = Plan(url=f"{module_builtin.url}webtest.html", connections=4, threads=1, duration_us=2_000_000)
    record = measure(plan, module_builtin, PARAMS, server_version="test").record
    assert record.result is not None and record.result["responses"] > 0
    return record


@pytest.fixture(scope="module")
def module_builtin() -> Any:
    from gauntlet.servers.builtin import start_builtin

    instance = start_builtin()
    yield instance
    instance.stop()


def fed(observer: LiveObserver, record: CaseRecord, *, ended: bool) -> None:
    """The case told to the state as the feed tells it: its start, each second, its samples, its end."""
    assert record.result is not None
    observer.state.begin(7, 3)
    observer.state.case_started(record.params, record.repeat, "builtin", record.server_version, 2.0)
    for second in record.result["timeline"]:
        observer.state.second(second)
    for point in record.result["server"]["timeline"]:
        observer.state.server_sample(point)
    if ended:
        observer.state.case_done(record)


def test_it_listens_on_loopback_on_a_free_port_and_closes_it_at_the_end() -> None:
    observer = LiveObserver("run", "127.0.0.1:0")
    url = observer.url
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    assert host == "127.0.0.1" and int(port) > 0
    content_type, page = get(url)
    assert content_type.startswith("text/html") and b"Plotly" in page and b"<script src" not in page
    with pytest.raises(urllib.error.HTTPError):
        get(url + "nothing")
    observer.close()
    observer.close()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", int(port)), timeout=2):
        pass


@pytest.mark.parametrize(("given", "address"), [
    ("", ("127.0.0.1", 0)), ("8123", ("127.0.0.1", 8123)), ("0.0.0.0:80", ("0.0.0.0", 80)), (":9", ("127.0.0.1", 9)),
    ("[::1]:8080", ("::1", 8080)), ("[::1]", ("::1", 0)),
])
def test_addresses(given: str, address: tuple[str, int]) -> None:
    assert parse_address(given) == address


@pytest.mark.parametrize("given", ["host:port", "127.0.0.1:70000", "example.org:80"])
def test_a_bad_address_is_one_line(given: str) -> None:
    with pytest.raises(GauntletError, match="--live"):
        LiveObserver("run", given).close()


def samples(metrics: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(metrics.decode()):
        for sample in family.samples:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in ("case", "case_key", "server_version")))
            found[(sample.name, labels)] = sample.value
    return found


def test_metrics_of_a_running_case_count_its_seconds(measured_case: CaseRecord) -> None:
    observer = LiveObserver("run", "127.0.0.1:0")
    try:
        fed(observer, measured_case, ended=False)
        content_type, metrics = get(observer.url + "metrics")
    finally:
        observer.close()
    assert content_type.startswith("application/openmetrics-text")
    result = measured_case.result
    assert result is not None
    case = (("repeat", "0"), ("run_id", "7"), ("server_kind", "builtin"))
    found = samples(metrics)
    assert found[("gauntlet_requests_total", case)] == sum(s["requests"] for s in result["timeline"])
    assert found[("gauntlet_case_running", case)] == 1
    last = result["timeline"][-1]
    assert found[("gauntlet_second_latency_seconds", (("quantile", "0.99"), *case))] == last["p99_us"] / 1e6
    assert ("gauntlet_latency_seconds_count", case) not in found, "a summary only once the engine's percentiles are in"
    assert found[("gauntlet_run_cases", (("run_id", "7"), ("state", "planned")))] == 3


def test_metrics_and_state_of_a_finished_case_are_its_result(measured_case: CaseRecord) -> None:
    observer = LiveObserver("suite", "127.0.0.1:0")
    try:
        fed(observer, measured_case, ended=True)
        _, metrics = get(observer.url + "metrics")
        _, state_json = get(observer.url + "state?since=0")
        _, later_json = get(observer.url + "state?since=3")
    finally:
        observer.close()
    result = measured_case.result
    assert result is not None
    case = (("repeat", "0"), ("run_id", "7"), ("server_kind", "builtin"))
    found = samples(metrics)
    assert found[("gauntlet_requests_total", case)] == result["requests"]
    assert found[("gauntlet_received_bytes_total", case)] == result["bytes_in"]
    assert found[("gauntlet_latency_seconds", (("quantile", "0.99"), *case))] == result["latency_us"]["p99"] / 1e6
    assert found[("gauntlet_latency_seconds_count", case)] == result["latency_us"]["count"]
    assert found[("gauntlet_case_running", case)] == 0
    memory = result["server"]["memory"]
    assert {role: found[("gauntlet_server_rss_bytes", (case[0], ("role", role), *case[1:]))] for role in memory} == {
        role: m["rss_bytes"] for role, m in memory.items()
    }
    state, later = json.loads(state_json), json.loads(later_json)
    points = len(result["timeline"]) + len(result["server"]["timeline"])
    assert (state["run_id"], state["planned_cases"], state["finished_cases"], state["current"]) == (7, 3, 1, None)
    assert len(state["points"]) == state["next_seq"] == points
    assert [p["seq"] for p in later["points"]] == list(range(3, points)), "a page asks only for what is new"
    assert state["last_finished"]["labels"] == measured_case.labels
    (cases_table,) = state["finished"]
    assert cases_table["title"] == "Cases" and len(cases_table["rows"]) == 1


@pytest.mark.parametrize(("args", "read"), [
    (["suite", "run", "quick", "--live"], ["suite", "run", "quick", "--live=127.0.0.1:0"]),
    (["suite", "run", "--live", "quick"], ["suite", "run", "--live=127.0.0.1:0", "quick"]),
    (["run", "--live", "--server", "nginx"], ["run", "--live=127.0.0.1:0", "--server", "nginx"]),
    (["run", "--live", "8080", "http://127.0.0.1:80/"], ["run", "--live", "8080", "http://127.0.0.1:80/"]),
    (["run", "--live", "0.0.0.0:9", "http://127.0.0.1:80/"], ["run", "--live", "0.0.0.0:9", "http://127.0.0.1:80/"]),
    (["run", "--live", "http://127.0.0.1:80/"], ["run", "--live=127.0.0.1:0", "http://127.0.0.1:80/"]),
    (["run", "--live=[::1]:9"], ["run", "--live=[::1]:9"]),
])
def test_a_bare_live_takes_the_default_address(args: list[str], read: list[str]) -> None:
    assert with_default_address(args) == read

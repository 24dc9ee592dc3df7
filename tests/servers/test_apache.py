"""The Apache driver against the real apache2, beyond the contract every kind meets
(test_contract.py, test_backends.py): what Apache itself refuses, a missing module, and the event
MPM closing kept-alive connections under load."""

from __future__ import annotations

import http.client
import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.report.tables import outcomes_table
from gauntlet.servers import apache
from gauntlet.servers.apache import start_apache
from gauntlet.servers.registry import start_server
from gauntlet.servers.spec import ServerSpec
from gauntlet.units import format_count
from tests.conftest import Start, require_available
from tests.helpers.logs import access_log_lines


def test_access_log_counts_the_requests_on_each_connection(server: Start) -> None:
    from gauntlet.servers.process import http_get

    instance = server("apache-event", access_log=True)
    for _ in range(2):
        assert http_get(instance.host, instance.port, "/webtest.html") is not None
    # Apache writes a request's line after its response has left: the client can read it first.
    deadline_s = time.monotonic() + 2.0
    while len(lines := instance.access_log_lines()) < 2 and time.monotonic() < deadline_s:
        time.sleep(0.01)
    # CLIENT_PORT KEEPALIVE_COUNT STATUS BYTES "REQUEST": a connection per request here.
    assert [line.split()[1:4] for line in lines] == [["0", "200", "168"]] * 2


def test_a_kind_that_is_not_an_mpm_is_refused() -> None:
    with pytest.raises(GauntletError, match="'apache-threaded' is not an Apache kind"):
        start_apache(ServerSpec("apache-threaded"))


def test_apache_itself_refuses_mod_php_under_a_threaded_mpm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry's reason is Apache's own: forced past the table, the start fails with its log."""
    require_available(ServerSpec("apache-prefork", backend="mod_php"))
    monkeypatch.setitem(apache.THREADED_BACKENDS, "mod_php", "module")
    with pytest.raises(GauntletError) as raised:
        start_apache(ServerSpec("apache-event", backend="mod_php"), ready_timeout_s=5)
    message = str(raised.value)
    assert "\n" not in message and "apache-event exited" in message
    assert "threadsafe" in message and "recompile PHP" in message


def test_a_missing_module_is_a_one_line_error_with_the_log_tail(tmp_path: Path) -> None:
    require_available(ServerSpec("apache-prefork"))
    with pytest.raises(GauntletError) as raised:
        start_apache(ServerSpec("apache-prefork"), modules=tmp_path, ready_timeout_s=5)
    message = str(raised.value)
    assert "\n" not in message and "Cannot load" in message and "No such file or directory" in message


def test_requests_lost_to_closed_keep_alive_connections_are_sent_again(server: Start) -> None:
    """Apache's event MPM closes the kept-alive connections it holds whenever all its workers are
    busy, racing the next request on them. With 4 threads for 100 connections they always are (96
    requests wait at any moment), so it closes them all the time (about a connection per 1.5
    requests measured), not only when the machine's timing allows (the lab's 50 threads kept up
    in 1 run of 11): those requests are sent again on a new connection, not errors, and Apache logs
    each request once."""
    instance = server("apache-event", access_log=True, workers=1, threads_per_child=4)
    requests = 5_000
    plan = {"url": f"{instance.url}webtest.html", "connections": 100, "threads": 2, "requests": requests}
    result = engine.run(plan).result
    assert (result["responses"], result["errors_total"]) == (requests, 0), result["errors"]
    assert result["stale_resent"] > 0
    lines = access_log_lines(instance, requests)
    assert len(lines) == requests, "each request processed once"
    # A connection's first request is logged with a keep-alive count (%k) of 0. Not its client port:
    # a port is used again once Apache has closed the connection (about 1 connection in 10 here).
    assert sum(line.split()[1] == "0" for line in lines) == result["connections_opened"]
    shown = Console(file=io.StringIO(), width=120)
    shown.print(outcomes_table(result))
    row = next(line.split() for line in shown.file.getvalue().splitlines() if "stale keep-alive" in line)
    assert row[-1] == format_count(result["stale_resent"])


def test_prefork_serves_at_most_max_request_workers_connections_at_once(server: Start) -> None:
    """Each kept-alive connection holds a prefork process through its keep-alive wait: with
    `max_request_workers` 3, a fourth connection is answered only once one of the three closes."""
    instance = server("apache-prefork", workers=1, max_request_workers=3)
    held = [http.client.HTTPConnection(instance.host, instance.port, timeout=10) for _ in range(3)]
    waiting = http.client.HTTPConnection(instance.host, instance.port, timeout=1.5)
    try:
        for connection in held:
            connection.request("GET", "/webtest.html")
            assert connection.getresponse().read()
        waiting.request("GET", "/webtest.html")
        with pytest.raises(TimeoutError):
            waiting.getresponse()
        held[0].close()
        waiting.sock.settimeout(10)
        assert waiting.getresponse().status == 200
    finally:
        for connection in (*held, waiting):
            connection.close()


@pytest.mark.parametrize("kind", ["nginx", "apache-event"])
@pytest.mark.parametrize("setting", ["max_request_workers", "min_spare_servers", "max_spare_servers"])
def test_a_prefork_setting_on_another_kind_is_refused_before_the_start(kind: str, setting: str) -> None:
    with pytest.raises(GauntletError, match=f"{kind} does not support {setting}: it is an Apache prefork setting"):
        start_server(ServerSpec(kind, **{setting: 30}))


def test_prefork_keeps_its_spare_processes_idle(server: Start) -> None:
    """By default prefork keeps the processes it started and no more idle; with
    `min_spare_servers` it forks idle ones until it has as many, with no request made."""
    fixed = server("apache-prefork", workers=1)
    spare = server("apache-prefork", workers=1, min_spare_servers=4, max_spare_servers=6)
    deadline_s = time.monotonic() + 10
    while len(spare.pids()) < 1 + 4 and time.monotonic() < deadline_s:
        time.sleep(0.1)
    assert len(spare.pids()) == 1 + 4, "the parent and its 4 idle children"
    assert len(fixed.pids()) == 1 + 1, "the parent and the one child it started"


@pytest.mark.parametrize(
    ("spec", "refusal"),
    [
        (ServerSpec("apache-prefork", workers=8, max_request_workers=4), "cannot start 8 processes .max_request_workers is 4"),
        (ServerSpec("apache-prefork", max_request_workers=200_001), "ServerLimit is at most 200,000"),
        (ServerSpec("apache-prefork", min_spare_servers=8, max_spare_servers=4), "at least 8 and at most 4 idle processes"),
    ],
)
def test_a_process_limit_prefork_cannot_honour_is_refused(spec: ServerSpec, refusal: str) -> None:
    require_available(spec)
    with pytest.raises(GauntletError, match=refusal):
        start_apache(spec)

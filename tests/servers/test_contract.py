"""What every server kind in the registry must do, against the real server: start and report its
installed version, serve the standard workload byte-exact over HTTP and HTTPS, keep connections
alive or not as configured (counted on the server's side), send kept-alive responses without a
Nagle stall, run the configured workers, fail a
start on a taken port with its log's tail, and leave nothing behind (the `server` fixture checks
that after every test).

A new kind is covered by adding it to the registry; what differs between kinds lives in the small
hooks below, not in copies of these tests. TLS pins: test_tls.py; backends: test_backends.py.
"""

from __future__ import annotations

from collections.abc import Callable

import psutil
import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.process import processes_under
from gauntlet.servers.registry import KINDS
from tests.conftest import Start
from tests.helpers.builtin_stats import server_stats
from tests.helpers.server_checks import (
    check_registry_version,
    check_serves_the_workload,
    check_taken_port,
    engine_connections,
    first_field_port,
    json_log_port,
    thread_names,
)

REQUESTS = 300  # engine_connections' default run: 4 connections


def _worker_processes(server: ServerInstance) -> int:
    """Children of the main process that run the same program."""
    main, *children = processes_under(server.main_pid)
    return sum(1 for child in children if child.name() == main.name())


def _threads_named(server: ServerInstance, matches: Callable[[str], bool]) -> int:
    return sum(1 for name in thread_names(server.main_pid) if matches(name))


# Per-kind hooks. How to count the workers `workers=3` asks for:
WORKERS: dict[str, Callable[[ServerInstance], int]] = {
    "builtin": lambda server: psutil.Process(server.main_pid).num_threads() - 1,  # its threads, less Python's
    "h2o": lambda server: psutil.Process(server.main_pid).num_threads() - 1,  # event loops, less the main thread
    "caddy": lambda server: int(psutil.Process(server.main_pid).environ()["GOMAXPROCS"]),
    "tomcat": lambda server: _threads_named(server, lambda name: name.startswith("worker-")),
    **{
        kind: lambda server: _threads_named(server, lambda name: name.endswith("_scheduler"))
        for kind in ("yaws", "inets", "mochiweb")
    },
}
#: The client port in an access-log line (default: its first field).
CLIENT_PORT: dict[str, Callable[[str], int]] = {
    "caddy": json_log_port,
}
#: How the start fails on a taken port, in its log's words (default: the C library's).
PORT_TAKEN: dict[str, str] = {
    "caddy": "address already in use",
    "yaws": "eaddrinuse",
    "node": "EADDRINUSE",
    "inets": "address already in use",
    "mochiweb": "address already in use",
}
#: What a kind cannot do, refused in one line with these words.
NO_ACCESS_LOG = {"builtin"}
NO_KEEPALIVE_OFF = {"builtin", "h2o"}
#: Kinds that refuse keepalive_requests altogether (no per-connection limit to set).
NO_REQUEST_LIMIT = {"builtin", "h2o", "caddy"}
NO_FIXED_PORT = {"builtin"}
#: Its Debian package, when the version the registry reports can be checked against dpkg.
PACKAGED = [kind for kind in KINDS if kind != "builtin"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_serves_the_workload_byte_exact(server: Start, kind: str, tls: bool) -> None:
    instance = server(kind, tls=tls)
    assert instance.url.startswith("https://" if tls else "http://") and instance.version
    check_serves_the_workload(instance)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("keepalive", [True, False], ids=["keep-alive", "no-keep-alive"])
def test_keep_alive_as_configured_counted_by_the_server(server: Start, kind: str, keepalive: bool) -> None:
    if kind in NO_KEEPALIVE_OFF and not keepalive:
        with pytest.raises(GauntletError, match="does not support keep-alive off"):
            server(kind, keepalive=False)
        return
    instance = server(kind, keepalive=keepalive, keepalive_requests=0, access_log=kind not in NO_ACCESS_LOG)
    # The engine asks for keep-alive either way: only the server decides.
    if kind in NO_ACCESS_LOG:
        accepted = connections_counted(instance)
    else:
        accepted = engine_connections(instance, CLIENT_PORT.get(kind, first_field_port))
    assert accepted == (4 if keepalive else REQUESTS)


def connections_counted(server: ServerInstance) -> int:
    """engine_connections for a server with a connection counter instead of an access log."""
    before = server_stats(server)["connections_accepted"]
    result = engine.run({"url": f"{server.url}webtest.html", "connections": 4, "threads": 2, "requests": REQUESTS}).result
    assert (result["responses"], result["errors_total"]) == (REQUESTS, 0), result["errors"]
    accepted = server_stats(server)["connections_accepted"] - before - 1  # less the second query's own
    assert accepted == result["connections_opened"]
    return accepted


@pytest.mark.parametrize("kind", KINDS)
def test_kept_alive_responses_are_not_held_by_nagle(server: Start, kind: str) -> None:
    """One connection: with Nagle on, a response's last segment waits for the client's delayed ACK,
    40 ms a request: the 83,572-byte image on Yaws at Erlang's default, and the 168-byte page on
    inets, which sends its head and body apart; without, well under 10 ms."""
    instance = server(kind)
    for path in ("image_large.jpg", "webtest.html"):
        plan = {"url": f"{instance.url}{path}", "connections": 1, "threads": 1, "requests": 60}
        result = engine.run(plan).result
        assert (result["responses"], result["errors_total"]) == (60, 0), result["errors"]
        assert result["latency_us"]["p50"] < 10_000, f"{kind} {path}: median {result['latency_us']['p50']} µs a request"


@pytest.mark.parametrize("kind", KINDS)
def test_a_request_limit_the_kind_cannot_honour_is_refused_before_the_start(server: Start, kind: str) -> None:
    if kind in NO_REQUEST_LIMIT:
        with pytest.raises(GauntletError, match="does not support"):
            server(kind, keepalive_requests=5)
    else:
        with pytest.raises(GauntletError, match=r"needs keepalive_requests of 0 \(no limit\) or more"):
            server(kind, keepalive_requests=-3)


@pytest.mark.parametrize("kind", KINDS)
def test_runs_the_configured_workers(server: Start, kind: str) -> None:
    instance = server(kind, workers=3)
    assert WORKERS.get(kind, _worker_processes)(instance) == 3


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind not in NO_FIXED_PORT])
def test_a_taken_port_is_a_one_line_error_with_the_log_tail(server: Start, kind: str) -> None:
    server(kind)  # skips (fails in CI) when the kind is not installed
    check_taken_port(lambda **knobs: server(kind, **knobs), PORT_TAKEN.get(kind, "Address already in use"))


@pytest.mark.parametrize("kind", PACKAGED)
def test_reports_the_installed_version(server: Start, kind: str) -> None:
    server(kind)
    check_registry_version(kind, KINDS[kind].package)


@pytest.mark.parametrize("kind", sorted(NO_ACCESS_LOG | NO_FIXED_PORT))
def test_what_a_kind_cannot_do_is_a_one_line_error(server: Start, kind: str) -> None:
    if kind in NO_ACCESS_LOG:
        with pytest.raises(GauntletError, match="does not support an access log"):
            server(kind, access_log=True)
    if kind in NO_FIXED_PORT:
        with pytest.raises(GauntletError, match="does not support a fixed port"):
            server(kind, port=8080)

"""What every server kind in the registry must do, against the real server: start, serve the
standard workload byte-exact over HTTP and HTTPS, keep connections alive or not as configured
(counted on the server's side), run the configured workers, fail a start on a taken port with its
log's tail, and leave nothing behind (the `server` fixture checks that after every test).

A new kind is covered by adding it to the registry; what differs between kinds lives in the small
hooks below, not in copies of these tests.
"""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Callable

import psutil
import pytest

from gauntlet import engine
from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.process import tree, unverified_tls
from gauntlet.servers.registry import KINDS
from tests.conftest import Start
from tests.helpers.builtin_stats import server_stats
from tests.helpers.logs import access_log_lines

CONTENT_TYPES = {"html": "text/html", "gif": "image/gif", "png": "image/png", "jpg": "image/jpeg"}
REQUESTS = 200
CONNECTIONS = 4


def _worker_processes(server: ServerInstance) -> int:
    """Children of the main process that run the same program."""
    main, *children = tree(server.main_pid)
    return sum(1 for child in children if child.name() == main.name())


def _logged_connections(server: ServerInstance, requests: int) -> int:
    """Distinct connections in the access log's last `requests` lines (first field: client port or
    connection serial)."""
    lines = access_log_lines(server, requests)
    assert len(lines) >= requests, f"{len(lines)} of {requests} requests logged"
    return len({line.split()[0] for line in lines[-requests:]})


# Per-kind hooks: how to count the workers it runs, and the connections it accepted.
WORKERS: dict[str, Callable[[ServerInstance], int]] = {
    "builtin": lambda server: psutil.Process(server.main_pid).num_threads() - 1,  # its threads, less Python's own
}
CONNECTIONS_ACCEPTED: dict[str, Callable[[ServerInstance, int], int]] = {
    # Its counter counts the query's own connection too.
    "builtin": lambda server, requests: server_stats(server)["connections_accepted"] - 1,
}
#: What a kind cannot do, and the settings that say so.
NO_ACCESS_LOG = {"builtin"}
NO_KEEPALIVE_OFF = {"builtin"}
NO_FIXED_PORT = {"builtin"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_serves_the_workload_byte_exact(server: Start, kind: str, tls: bool) -> None:
    instance = server(kind, tls=tls)
    assert instance.url.startswith("https://" if tls else "http://") and instance.version
    context = unverified_tls() if tls else None
    for name, body in workload_files().items():
        with urllib.request.urlopen(instance.url + name, timeout=5, context=context) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].split(";")[0] == CONTENT_TYPES[name.rsplit(".", 1)[1]], name
            assert response.read() == body, name


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("keepalive", [True, False], ids=["keep-alive", "no-keep-alive"])
def test_keep_alive_as_configured_counted_by_the_server(server: Start, kind: str, keepalive: bool) -> None:
    if kind in NO_KEEPALIVE_OFF and not keepalive:
        with pytest.raises(GauntletError, match="always keeps connections alive"):
            server(kind, keepalive=False)
        return
    instance = server(kind, keepalive=keepalive, keepalive_requests=0, access_log=kind not in NO_ACCESS_LOG)
    # The client asks for keep-alive either way: only the server decides.
    result = engine.run(
        {"url": f"{instance.url}webtest.html", "connections": CONNECTIONS, "threads": 2, "requests": REQUESTS}
    ).result
    assert (result["responses"], result["errors_total"]) == (REQUESTS, 0), result["errors"]
    accepted = CONNECTIONS_ACCEPTED.get(kind, _logged_connections)(instance, REQUESTS)
    assert accepted == (CONNECTIONS if keepalive else REQUESTS)
    assert result["connections_opened"] == accepted


@pytest.mark.parametrize("kind", KINDS)
def test_runs_the_configured_workers(server: Start, kind: str) -> None:
    instance = server(kind, workers=3)
    assert WORKERS.get(kind, _worker_processes)(instance) == 3


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind not in NO_FIXED_PORT])
def test_a_taken_port_is_a_one_line_error_with_the_log_tail(server: Start, kind: str) -> None:
    server(kind)  # skips (fails in CI) when the kind is not installed
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        with pytest.raises(GauntletError) as raised:
            server(kind, port=taken.getsockname()[1], ready_timeout_s=5)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(kind)
    assert "Address already in use" in message, message


@pytest.mark.parametrize("kind", sorted(NO_ACCESS_LOG | NO_FIXED_PORT))
def test_what_a_kind_cannot_do_is_a_one_line_error(server: Start, kind: str) -> None:
    if kind in NO_ACCESS_LOG:
        with pytest.raises(GauntletError, match="instead of an access log"):
            server(kind, access_log=True)
    if kind in NO_FIXED_PORT:
        with pytest.raises(GauntletError, match="binds a port of its own choosing"):
            server(kind, port=8080)

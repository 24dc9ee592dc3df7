"""Servers sized for the connections a run brings: nginx and lighttpd past their default 4,096
connections, and one line for each limit of this machine that still stops a server short."""

from __future__ import annotations

import socket

import pytest

from gauntlet.limits import files_per_process
from gauntlet.servers.sizing import limit_lines, somaxconn
from gauntlet.servers.spec import ServerSpec
from tests.conftest import require_available
from tests.servers.test_nginx import connect, get

#: Past nginx's and lighttpd's 4,096 default connections, within this machine's listen backlog.
CONNECTIONS = 4200


@pytest.mark.parametrize(
    ("kind", "limit_line"),
    [
        ("nginx", "worker_connections 4544;"),  # a sixteenth more, and 64 spare
        ("lighttpd", "server.max-connections = 4264"),  # and twice that many descriptors
    ],
)
def test_a_server_holds_the_connections_the_run_expects(server, kind: str, limit_line: str) -> None:
    """Past the server's default limit of 4,096 connections: every one is answered while all are
    open (at 4,096 nginx would close those past it, and lighttpd leave them unanswered)."""
    require_available(ServerSpec(kind))
    started = server(kind, workers=1, expected_connections=CONNECTIONS)
    assert limit_line in started.config_text
    socks: list[socket.socket] = []
    try:
        for _ in range(CONNECTIONS):
            socks.append(connect(started.port))
        statuses = [get(sock, "/webtest.html")[0].split("\r\n", 1)[0] for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    assert statuses == ["HTTP/1.1 200 OK"] * CONNECTIONS


def test_limits_past_one_process_files_and_the_backlog_are_one_line_each() -> None:
    hard = files_per_process()
    lines = limit_lines("nginx", hard, 1)
    assert any("hard limit" in line and "limits.conf" in line for line in lines), lines
    cap = somaxconn()
    assert any("somaxconn" in line for line in lines) == (cap is not None and cap < hard), lines
    assert not any("hard limit" in line for line in limit_lines("apache-prefork", hard, None)), "a process per connection"
    assert limit_lines("nginx", 100, 1) == [] or cap is not None and cap < 100


def test_lighttpd_needs_two_files_a_connection() -> None:
    """lighttpd caps its connections at half its descriptors: 60 % of the hard limit in
    connections is past it for lighttpd, within it for nginx."""
    connections = files_per_process() * 6 // 10
    assert any("hard limit" in line for line in limit_lines("lighttpd", connections, 1))
    assert not any("hard limit" in line for line in limit_lines("nginx", connections, 1))


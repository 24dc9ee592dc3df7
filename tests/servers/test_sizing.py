"""Servers sized for the connections a run brings: nginx past its default 4,096 worker connections,
and one line for each limit of this machine that still stops a server short."""

from __future__ import annotations

import socket

from gauntlet.limits import files_per_process
from gauntlet.servers.sizing import limit_lines, somaxconn
from tests.servers.test_nginx import connect, get

#: Past nginx's 4,096 default worker connections, within this machine's listen backlog.
CONNECTIONS = 4200


def test_nginx_holds_the_connections_the_run_expects(nginx_server) -> None:
    server = nginx_server(workers=1, expected_connections=CONNECTIONS)
    assert "worker_connections 4544;" in server.config_text, "a sixteenth more, and 64 spare"
    socks: list[socket.socket] = []
    try:
        for _ in range(CONNECTIONS):
            socks.append(connect(server.port))
        # Every one of them answered while all are open: with 4,096 worker connections nginx
        # would have closed those past it.
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

"""The lighttpd driver against the real lighttpd: content, workers, keep-alive, access log, HTTPS,
and the engine's counts against the access log."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Callable

import pytest

from gauntlet import engine
from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.lighttpd import flush_access_log
from gauntlet.servers.process import unverified_tls
from tests.helpers.logs import log_lines

Start = Callable[..., ServerInstance]


def get_on(sock: socket.socket, path: str) -> bytes:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(l for l in head.decode().split("\r\n") if l.lower().startswith("content-length:")).split(":")[1])
    while len(body) < length:
        body += sock.recv(65536)
    return body


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(2.0)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False


def test_serves_the_workload_byte_exact(lighttpd_server: Start) -> None:
    server = lighttpd_server()
    for name, body in workload_files().items():
        with urllib.request.urlopen(server.url + name, timeout=5) as response:
            assert response.read() == body, name


@pytest.mark.parametrize("workers", [1, 3])
def test_worker_processes(lighttpd_server: Start, workers: int) -> None:
    server = lighttpd_server(workers=workers)
    assert len(server.pids()) == (1 if workers == 1 else 1 + workers)


def test_keep_alive_on_and_off(lighttpd_server: Start) -> None:
    kept = lighttpd_server()
    with socket.create_connection(("127.0.0.1", kept.port), timeout=5) as sock:
        get_on(sock, "/webtest.html")
        assert not closed_by_server(sock)
    closing = lighttpd_server(keepalive=False)
    with socket.create_connection(("127.0.0.1", closing.port), timeout=5) as sock:
        get_on(sock, "/webtest.html")
        assert closed_by_server(sock)


@pytest.mark.parametrize(
    ("fields", "connections"),
    [({"requests": 1500}, range(6, 7)), ({"requests": 300, "keepalive": False}, range(300, 301))],
)
def test_engine_counts_equal_the_access_log(lighttpd_server: Start, fields: dict, connections: range) -> None:
    server = lighttpd_server(workers=2, access_log=True, keepalive_requests=100_000)
    result = engine.run({"url": f"{server.url}webtest.html", "connections": 6, "threads": 2, **fields}).result
    assert (result["responses"], result["errors_total"]) == (fields["requests"], 0)
    flush_access_log(server)
    lines = log_lines(server.workdir / "logs" / "access.log", fields["requests"])
    assert len(lines) == fields["requests"]
    assert len({line.split()[0] for line in lines}) in connections, "client ports = TCP connections"


def test_https(lighttpd_server: Start) -> None:
    server = lighttpd_server(tls=True)
    with urllib.request.urlopen(server.url + "image_10k.png", timeout=5, context=unverified_tls()) as response:
        assert response.read() == workload_files()["image_10k.png"]
    result = engine.run({"url": f"{server.url}webtest.html", "connections": 2, "requests": 100}).result
    assert (result["responses"], result["tls"]["handshakes"]) == (100, 2)


def test_a_taken_port_is_one_line_with_the_log(lighttpd_server: Start) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        with pytest.raises(GauntletError) as raised:
            lighttpd_server(port=taken.getsockname()[1], ready_timeout_s=3)
    assert "\n" not in str(raised.value)
    assert "Address already in use" in str(raised.value)

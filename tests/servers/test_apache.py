"""The Apache driver with each MPM against the real apache2: content, processes, keep-alive,
the access log against the engine's counts, HTTPS, and a failed start."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Callable

import pytest

from gauntlet import engine
from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.process import unverified_tls
from tests.helpers.logs import log_lines

Start = Callable[..., ServerInstance]
MPMS = ("prefork", "worker", "event")


@pytest.mark.parametrize("mpm", MPMS)
def test_serves_the_workload_with_the_configured_processes(apache_server: Start, mpm: str) -> None:
    server = apache_server(mpm=mpm, processes=3)
    assert server.kind == f"apache-{mpm}"
    for name, body in workload_files().items():
        with urllib.request.urlopen(server.url + name, timeout=5) as response:
            assert response.read() == body, name
    assert len(server.pids()) == 1 + 3
    assert f"mod_mpm_{mpm}.so" in server.config_text


@pytest.mark.parametrize("mpm", MPMS)
def test_engine_counts_equal_the_access_log(apache_server: Start, mpm: str) -> None:
    server = apache_server(mpm=mpm, access_log=True, keepalive_requests=0)
    for fields, connections in (({"requests": 1200}, 6), ({"requests": 300, "keepalive": False}, 300)):
        before = len(log_lines(server.workdir / "logs" / "access.log", 0))
        result = engine.run({"url": f"{server.url}webtest.html", "connections": 6, "threads": 2, **fields}).result
        assert (result["responses"], result["errors_total"]) == (fields["requests"], 0), result["errors"]
        lines = log_lines(server.workdir / "logs" / "access.log", before + fields["requests"])[before:]
        assert len(lines) == fields["requests"]
        assert len({line.split()[0] for line in lines}) == connections, "client ports = TCP connections"


def test_keep_alive_off_closes_after_each_response(apache_server: Start) -> None:
    server = apache_server(mpm="event", keepalive=False)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /webtest.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert b"Connection: close" in data and data.endswith(workload_files()["webtest.html"])


def test_https(apache_server: Start) -> None:
    server = apache_server(mpm="event", tls=True)
    with urllib.request.urlopen(server.url + "image_small.gif", timeout=5, context=unverified_tls()) as response:
        assert response.read() == workload_files()["image_small.gif"]
    result = engine.run({"url": f"{server.url}webtest.html", "connections": 2, "requests": 100}).result
    assert (result["responses"], result["tls"]["handshakes"]) == (100, 2)


def test_bad_settings_and_a_taken_port_are_one_line(apache_server: Start) -> None:
    with pytest.raises(GauntletError, match="not an Apache MPM"):
        apache_server(mpm="threaded")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        with pytest.raises(GauntletError) as raised:
            apache_server(mpm="prefork", port=taken.getsockname()[1], ready_timeout_s=5)
    assert "\n" not in str(raised.value) and "Address already in use" in str(raised.value)

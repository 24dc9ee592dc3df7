"""The nginx driver against the real nginx, beyond the contract every kind meets (test_contract.py):
the index, worker processes and their user, the keep-alive request limit, the access log's fields,
where files go, TLS session resumption."""

from __future__ import annotations

import os
import socket
import urllib.request

import psutil
import pytest

from gauntlet.engine import workload_files
from tests.helpers.logs import log_lines
from tests.helpers.server_checks import closed_by_server

FILES = workload_files()
TIMEOUT_S = 5.0


def read_response(sock: socket.socket) -> tuple[str, bytes]:
    """One HTTP/1.1 response with a Content-Length body, read off a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed inside the response head: {data!r}"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    head_text = head.decode("latin-1")
    length = next(
        int(line.split(":", 1)[1])
        for line in head_text.split("\r\n")
        if line.lower().startswith("content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside the response body"
        body += chunk
    assert len(body) == length, "more bytes than the response"
    return head_text, body


def get(sock: socket.socket, path: str) -> tuple[str, bytes]:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    return read_response(sock)


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)


def test_index_is_webtest_page(nginx_server):
    server = nginx_server()
    with urllib.request.urlopen(server.url, timeout=TIMEOUT_S) as response:
        assert response.read() == FILES["webtest.html"]


@pytest.mark.parametrize("workers", [1, 3])
def test_worker_count_follows_parameter(nginx_server, workers):
    server = nginx_server(workers=workers)
    master, *children = (psutil.Process(pid) for pid in server.pids())
    assert " ".join(master.cmdline()).startswith("nginx: master process")
    worker_procs = [p for p in children if p.cmdline()[0] == "nginx: worker process"]
    assert len(worker_procs) == workers
    assert all(p.ppid() == master.pid for p in worker_procs)


def test_workers_drop_privileges_only_as_root(nginx_server):
    server = nginx_server(workers=1)
    worker = psutil.Process(server.pids()[1])
    if os.geteuid() == 0:
        assert "\nuser nobody " in server.config_text
        assert worker.username() == "nobody"
    else:
        assert "\nuser " not in server.config_text
        assert worker.uids().effective == os.geteuid()


def test_keepalive_on_closes_after_keepalive_requests(nginx_server):
    server = nginx_server(keepalive_requests=3)
    with connect(server.port) as sock:
        for _ in range(2):
            head, _ = get(sock, "/webtest.html")
            assert "Connection: keep-alive" in head
        assert not closed_by_server(sock, 0.3)
        head, _ = get(sock, "/webtest.html")
        assert "Connection: close" in head
        assert closed_by_server(sock, TIMEOUT_S)


def test_access_log_counts_each_request(nginx_server):
    server = nginx_server(access_log=True)
    with connect(server.port) as sock:
        for _ in range(4):
            get(sock, "/webtest.html")
    with connect(server.port) as sock:
        head, _ = get(sock, "/missing.html")
        assert head.startswith("HTTP/1.1 404")
    lines = log_lines(server.workdir / "logs" / "access.log", 5)
    assert len(lines) == 5, lines  # the readiness probes are not logged
    fields = [line.split(" ", 4) for line in lines]
    assert len({f[0] for f in fields[:4]}) == 1, "the first four share one connection"
    assert [int(f[1]) for f in fields] == [1, 2, 3, 4, 1]
    assert [f[2] for f in fields] == ["200"] * 4 + ["404"]
    assert int(fields[0][3]) == len(FILES["webtest.html"])


def test_access_log_off_by_default(nginx_server):
    server = nginx_server()
    with urllib.request.urlopen(server.url + "webtest.html", timeout=TIMEOUT_S) as response:
        response.read()
    assert "access_log off;" in server.config_text
    assert not (server.workdir / "logs" / "access.log").exists()


def test_everything_stays_in_the_workdir(nginx_server):
    server = nginx_server()
    assert f"listen 127.0.0.1:{server.port} backlog=511;" in server.config_text
    for line in server.config_text.splitlines():
        if line.strip().startswith(("pid ", "access_log /", "root ")) or "_temp_path" in line:
            assert str(server.workdir) in line, line
    assert (server.workdir / "nginx.pid").read_text().strip() == str(server.pids()[0])


def test_https_resumes_sessions_from_its_cache(nginx_server):
    from gauntlet import engine

    server = nginx_server(tls=True, access_log=True)
    result = engine.run({"url": server.url + "webtest.html", "connections": 4, "threads": 2, "requests": 400,
                         "keepalive": False}).result
    assert (result["responses"], result["errors_total"]) == (400, 0), result["errors"]
    assert result["tls"]["handshakes"] == 400 and result["tls"]["resumed"] > 300
    assert len(log_lines(server.workdir / "logs" / "access.log", 400)) == 400

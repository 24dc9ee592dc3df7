"""What every driver's tests check against its real server, each from the other side of the socket:
the workload byte-exact with its content types, keep-alive on a raw connection, the engine's
connections against the client ports in the server's access log, TLS pins, a taken port."""

from __future__ import annotations

import functools
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from gauntlet import engine
from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.process import unverified_tls
from gauntlet.servers.registry import availability

#: Engine clients offering one TLS version or one suite: TLS 1.3 first, then TLS 1.2.
CLIENT_PINS = [
    {"version": "1.3"},
    {"cipher": "TLS13_AES_128_GCM_SHA256"},
    {"cipher": "TLS13_AES_256_GCM_SHA384"},
    {"version": "1.2"},
    {"cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
    {"cipher": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
]
CONTENT_TYPES = {"html": "text/html", "gif": "image/gif", "jpg": "image/jpeg", "png": "image/png"}
TIMEOUT_S = 5.0
#: Servers write a request's access-log line after its response has left.
LOG_WAIT_S = 3.0
#: How long after its idle timeout a server may close the connection, on a loaded machine; a
#: 1 s timeout plus this stays short of every kind's own default (Node.js's 5 s is the least).
IDLE_CLOSE_SLACK_S = 3.0


@functools.cache
def tree_sample() -> dict[str, bytes]:
    """Every 37th file of the workload tree (all four size classes, several directories)."""
    files = engine.tree_files()
    return {path: files[path] for path in sorted(files)[::37]}


def check_serves_the_workload(server: ServerInstance) -> None:
    """Every workload file byte-exact, with its media type (a charset parameter may follow), and
    a sample of the workload tree."""
    context = unverified_tls() if server.scheme == "https" else None
    for name, body in workload_files().items():
        with urllib.request.urlopen(server.url + name, timeout=TIMEOUT_S, context=context) as response:
            assert response.read() == body, name
            media_type = response.headers["Content-Type"].split(";")[0].strip()
            assert media_type == CONTENT_TYPES[name.rsplit(".", 1)[1]], name
    for path, body in tree_sample().items():
        with urllib.request.urlopen(server.url + path.lstrip("/"), timeout=TIMEOUT_S, context=context) as response:
            assert response.read() == body, path


def get(sock: socket.socket, path: str = "/webtest.html") -> str:
    """One GET on a raw plain-HTTP connection; the response head (its body is read and checked)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed inside the response head: {data!r}"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    text = head.decode("latin-1")
    fields = dict(line.split(":", 1) for line in text.split("\r\n")[1:])
    length = int(next(value for name, value in fields.items() if name.lower() == "content-length"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed inside the response body"
        body += chunk
    assert body == workload_files()[path.lstrip("/")]
    return text


def closed_by_server(sock: socket.socket, wait_s: float) -> bool:
    """True when the server closes the connection within wait_s, False when it stays open and silent."""
    sock.settimeout(wait_s)
    try:
        unasked = sock.recv(64)
        assert not unasked, f"the server sent bytes nobody asked for: {unasked!r}"
        return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.settimeout(TIMEOUT_S)


def thread_names(pid: int) -> list[str]:
    """The names of a process's threads (what the kernel shows, 15 characters at most)."""
    return [(task / "comm").read_text().strip() for task in Path(f"/proc/{pid}/task").iterdir()]


def connect(server: ServerInstance) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=TIMEOUT_S)


def requests_before_close(server: ServerInstance, most: int = 5) -> int:
    """How many requests the server answers on one raw connection before it closes it (up to `most`)."""
    with connect(server) as sock:
        for served in range(1, most + 1):
            get(sock)
            if closed_by_server(sock, 0.3):
                return served
    return most


def check_closes_idle_connections(server: ServerInstance, timeout_s: float = 1.0) -> None:
    """The server closes a connection left idle after one response at its configured `timeout_s`,
    not at its own default: between half of it and IDLE_CLOSE_SLACK_S later. When it does not, the
    failure says who holds the port."""
    with connect(server) as sock:
        get(sock)
        began = time.monotonic()
        closed = closed_by_server(sock, timeout_s + IDLE_CLOSE_SLACK_S)
        after_s = time.monotonic() - began
        holders = "" if closed else port_holders(server.port)
    assert closed, f"the connection is still open {after_s:.1f} s after its response; {holders}"
    assert timeout_s / 2 <= after_s, f"closed {after_s:.2f} s after its response, before its {timeout_s:g} s timeout"


def port_holders(port: int) -> str:
    """Every TCP socket on `port`: the process holding it, its state and its peer's port."""
    held = [
        f"pid {conn.pid} {conn.status} from {conn.raddr.port if conn.raddr else '-'}"
        for conn in psutil.net_connections("tcp")
        if conn.laddr.port == port
    ]
    return f"port {port}: " + ("; ".join(held) or "nothing holds it")


def engine_connections(
    server: ServerInstance, client_port: Callable[[str], int], *, requests: int = 300, keepalive: bool = True
) -> int:
    """Run the engine (4 connections) and return the TCP connections it opened, after checking that
    the access log has one line per request and as many client ports as the engine connections.

    The run's requests carry a query string of their own, which the log lines repeat: lines of
    other requests (earlier runs, refused handshakes) are not counted.
    """
    marker = f"run={time.monotonic_ns()}"
    url = f"{server.url}webtest.html?{marker}"
    plan = {"url": url, "connections": 4, "threads": 2, "requests": requests, "keepalive": keepalive}
    result = engine.run(plan).result
    assert (result["responses"], result["errors_total"]) == (requests, 0), result["errors"]
    deadline = time.monotonic() + LOG_WAIT_S
    while len(lines := [line for line in server.access_log_lines() if marker in line]) < requests:
        if time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    assert len(lines) == requests, "one access-log line per request"
    ports = {client_port(line) for line in lines}
    assert len(ports) == result["connections_opened"], "the server accepted the connections the engine opened"
    return len(ports)


def first_field_port(line: str) -> int:
    """The client port of an access-log line that starts with it."""
    return int(line.split()[0])


def json_log_port(line: str) -> int:
    """The client port of a JSON access-log line (Caddy's)."""
    return int(json.loads(line)["request"]["remote_port"])


def tls_outcomes(server: ServerInstance) -> list[int]:
    """Responses to 3 requests from an engine client pinned to each of CLIENT_PINS (0: refused)."""
    outcomes = []
    for tls in CLIENT_PINS:
        result = engine.run({"url": server.url + "webtest.html", "connections": 1, "requests": 3, "tls": tls}).result
        assert result["responses"] + result["errors_total"] == 3, result["errors"]
        # A refusal fails the handshake: a TLS alert (`tls`), or h2o's reset of the connection.
        refused = result["errors"].get("tls", 0) + result["errors"].get("reset", 0)
        assert refused == result["errors_total"], result["errors"]
        outcomes.append(result["responses"])
    return outcomes


def check_registry_version(kind: str, package: str) -> None:
    """The registry reports the upstream version of the Debian package that is installed."""
    version = availability(kind).version
    query = ["dpkg-query", "--show", "--showformat", "${Version}", package]
    installed = subprocess.run(query, capture_output=True, text=True, check=True, timeout=10).stdout
    upstream = installed.split(":")[-1]
    assert version is not None and upstream.startswith(version), (version, installed)
    assert not upstream[len(version) :][:1].isdigit(), "the whole version, not a prefix of it"


def check_taken_port(start: Callable[..., ServerInstance], *causes: str, **params: Any) -> None:
    """Starting on a port something else listens on is one line naming the cause from the log."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        with pytest.raises(GauntletError) as raised:
            start(port=taken.getsockname()[1], **params)
    message = str(raised.value)
    assert "\n" not in message
    assert any(cause in message for cause in causes), message

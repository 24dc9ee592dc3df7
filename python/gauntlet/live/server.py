"""The live view's HTTP server: a thread of the gauntlet process (no other process) serving the page
(`/`), the state it redraws from (`/state?since=N`) and the Prometheus metrics (`/metrics`), on
127.0.0.1 and a free port unless told otherwise. It stops, and its port closes, when the command's
`with` block ends."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self
from urllib.parse import parse_qs, urlsplit

from gauntlet.errors import GauntletError
from gauntlet.live.metrics import CONTENT_TYPE, exposition
from gauntlet.live.page import render_page
from gauntlet.live.state import LiveState

DEFAULT_HOST = "127.0.0.1"
#: How long a stop waits for the serving loop to notice it.
POLL_INTERVAL_S = 0.2


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `PORT`, `HOST` or `[V6]:PORT` as (host, port); the host by default 127.0.0.1,
    the port by default 0 (a free one)."""
    host, port_text = DEFAULT_HOST, "0"
    if text.isdigit():
        port_text = text
    elif text.startswith("["):
        inside, _, rest = text[1:].partition("]")
        host, port_text = inside, rest.removeprefix(":") or "0"
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        host = host or DEFAULT_HOST
    elif text:
        host = text
    if not port_text.isdigit() or int(port_text) > 65535:
        raise GauntletError(f"--live {text!r}: {port_text!r} is not a port", "Give --live PORT, HOST:PORT or leave the address out")
    return host, int(port_text)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: LiveState, page: bytes) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _Handler)
        self.state = state
        self.page = page
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()

    def opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._open.add(connection)

    def closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._open.discard(connection)

    def close_connections(self) -> None:
        """End the keep-alive connections a browser holds: once the command ends nothing answers."""
        with self._lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.server.opened(self.connection)

    def finish(self) -> None:
        self.server.closed(self.connection)
        super().finish()

    def do_GET(self) -> None:  # noqa: N802 (the http.server's name)
        url = urlsplit(self.path)
        if url.path == "/":
            self._send(200, "text/html; charset=utf-8", self.server.page)
        elif url.path == "/state":
            since = parse_qs(url.query).get("since", ["0"])[0]
            snapshot = self.server.state.snapshot(int(since) if since.isdigit() else 0)
            self._send(200, "application/json", json.dumps(snapshot).encode())
        elif url.path == "/metrics":
            self._send(200, CONTENT_TYPE, exposition(self.server.state))
        else:
            self._send(404, "text/plain", b"not found: / (the page), /state, /metrics\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the terminal shows the run's progress, not the page's requests."""


class LiveServer:
    """`with LiveServer(state, "127.0.0.1:0") as live:` serves while the block runs; `live.url` is
    the page's address."""

    def __init__(self, state: LiveState, address: str) -> None:
        host, port = parse_address(address)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            if host != "localhost":
                raise GauntletError(f"--live {address!r}: {host!r} is not an IP address", "Name the interface by its address (127.0.0.1, ::1, 0.0.0.0)") from None
        try:
            self._server = _Server((host, port), state, render_page())
        except OSError as err:
            raise GauntletError(f"--live cannot listen on {host}:{port} ({err.strerror})", "Give another port, or leave it out for a free one") from None
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S}, name="gauntlet-live", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        self._thread.join()

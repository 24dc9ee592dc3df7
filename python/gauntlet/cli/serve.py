"""`gauntlet serve`: the built-in reference server, standalone, until SIGINT or SIGTERM."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Annotated

import typer

from gauntlet import engine

LISTENING_LINE = "gauntlet serve: listening on {scheme}://{host}:{port}/"


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port; 0 picks a free one")] = 0,
    threads: Annotated[int, typer.Option("--threads", min=1, help="Server threads")] = 2,
    stall_ms: Annotated[int, typer.Option("--stall-ms", min=0, help="Hold all responses this long...")] = 0,
    stall_every_ms: Annotated[int, typer.Option("--stall-every-ms", min=0, help="...once every this many ms")] = 0,
    tls: Annotated[bool, typer.Option("--tls", help="HTTPS with a self-signed certificate made at start")] = False,
    tls_version: Annotated[
        str | None, typer.Option("--tls-version", help="With --tls: the only TLS version served, 1.2 or 1.3")
    ] = None,
    cipher: Annotated[
        str | None,
        typer.Option("--cipher", help="With --tls: the only cipher suite served, e.g. TLS_AES_128_GCM_SHA256"),
    ] = None,
) -> int:
    """Serve the standard workload (and /hello, fault injection) from memory."""
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    server = engine.serve(host, port, threads, stall_ms, stall_every_ms, tls, tls_version=tls_version, cipher=cipher)
    shown_host = f"[{server.host}]" if ":" in server.host else server.host
    scheme = "https" if tls else "http"
    print(LISTENING_LINE.format(scheme=scheme, host=shown_host, port=server.port), flush=True)
    while not stop.wait(0.5):
        pass
    stats = server.stats()
    server.stop()
    print(
        f"gauntlet serve: stopped after {stats['requests']} requests on {stats['connections_accepted']} connections",
        file=sys.stderr,
    )
    return 0

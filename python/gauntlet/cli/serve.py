"""`gauntlet serve`: the built-in reference server, standalone, until SIGINT or SIGTERM.

With `--processes N`, N - 1 more processes serve the same port (each listener has SO_REUSEPORT,
so the kernel spreads connections over all of them): one process may open only so many files,
and every connection is one. The first process starts the others, announces the port once they
all listen, stops them with itself and reports their counts added to its own.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from types import FrameType
from typing import Annotated

import typer

from gauntlet import engine
from gauntlet.bounds import PORT, STALL_MS, WORKERS
from gauntlet.cli.options import bounded

LISTENING_LINE = "gauntlet serve: listening on {scheme}://{host}:{port}/"
STOPPED = re.compile(r"stopped after (?P<requests>\d+) requests on (?P<connections>\d+) connections")
#: How long a sibling process may take to listen, and to stop.
SIBLING_TIMEOUT_S = 30.0


def start_siblings(count: int, port: int, argv: list[str]) -> list[subprocess.Popen[str]]:
    """`count` more servers on `port`, returned once each has announced it listens."""
    siblings: list[subprocess.Popen[str]] = []
    command = [sys.executable, "-m", "gauntlet", "serve", "--port", str(port), *argv]
    for _ in range(count):
        sibling = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        siblings.append(sibling)
        line = sibling.stdout.readline() if sibling.stdout else ""
        if not line.startswith("gauntlet serve: listening on"):
            stop_siblings(siblings)
            raise SystemExit(f"gauntlet serve: a sibling process on port {port} did not start ({line.strip() or 'no output'})")
    return siblings


def stop_siblings(siblings: list[subprocess.Popen[str]]) -> tuple[int, int]:
    """Stop them; their requests and connections, added."""
    requests = connections = 0
    for sibling in siblings:
        sibling.send_signal(signal.SIGTERM)
    for sibling in siblings:
        try:
            _, errors = sibling.communicate(timeout=SIBLING_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            sibling.kill()
            _, errors = sibling.communicate()
        counts = STOPPED.search(errors or "")
        if counts:
            requests += int(counts["requests"])
            connections += int(counts["connections"])
    return requests, connections


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on")] = "127.0.0.1",
    port: Annotated[int, bounded(PORT, "--port", help="Port; 0 picks a free one")] = 0,
    threads: Annotated[int, bounded(WORKERS, "--threads", help="Server threads")] = 2,
    stall_ms: Annotated[int, bounded(STALL_MS, "--stall-ms", help="Hold all responses this long...")] = 0,
    stall_every_ms: Annotated[int, bounded(STALL_MS, "--stall-every-ms", help="...once every this many ms")] = 0,
    tls: Annotated[bool, typer.Option("--tls", help="HTTPS with a self-signed certificate made at start")] = False,
    tls_version: Annotated[
        str | None, typer.Option("--tls-version", help="With --tls: the only TLS version served, 1.2 or 1.3")
    ] = None,
    cipher: Annotated[
        str | None,
        typer.Option("--cipher", help="With --tls: the only cipher suite served, e.g. TLS_AES_128_GCM_SHA256"),
    ] = None,
    processes: Annotated[
        int, bounded(WORKERS, "--processes", help="Processes serving the port (each may open only so many files)")
    ] = 1,
) -> int:
    """Serve the standard workload (and /hello, fault injection) from memory."""
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    server = engine.serve(host, port, threads, stall_ms, stall_every_ms, tls, tls_version=tls_version, cipher=cipher)
    sibling_argv = ["--host", host, "--threads", str(threads), "--stall-ms", str(stall_ms), "--stall-every-ms", str(stall_every_ms)]
    sibling_argv += (["--tls"] if tls else []) + (["--tls-version", tls_version] if tls_version else [])
    sibling_argv += ["--cipher", cipher] if cipher else []
    try:
        siblings = start_siblings(processes - 1, server.port, sibling_argv)
    except BaseException:
        server.stop()
        raise
    shown_host = f"[{server.host}]" if ":" in server.host else server.host
    scheme = "https" if tls else "http"
    print(LISTENING_LINE.format(scheme=scheme, host=shown_host, port=server.port), flush=True)
    while not stop.wait(0.5):
        pass
    stats = server.stats()
    server.stop()
    sibling_requests, sibling_connections = stop_siblings(siblings)
    requests, connections = stats["requests"] + sibling_requests, stats["connections_accepted"] + sibling_connections
    print(
        f"gauntlet serve: stopped after {requests} requests on {connections} connections",
        file=sys.stderr,
    )
    return 0

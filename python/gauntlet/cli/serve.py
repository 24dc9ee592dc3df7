"""`gauntlet serve`: the built-in reference server, standalone, until SIGINT or SIGTERM.

The options are read and checked here (the bounds table), then handed over to the engine's one
implementation of the command (engine/src/server/command.rs, which `gauntlet-engine serve` runs
too): with `--processes N`, N - 1 more processes (`python -m gauntlet serve`) serve the same port
(each listener has SO_REUSEPORT, so the kernel spreads connections over all of them): one process
may open only so many files, and every connection is one. The first process starts the others,
announces the port once they all listen, stops them with itself and reports their counts added to
its own.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from gauntlet import engine
from gauntlet.bounds import PORT, STALL_MS, WORKERS
from gauntlet.cli.options import bounded

#: What runs one more process of the server (its siblings).
SIBLING_PROGRAM = [sys.executable, "-m", "gauntlet", "serve"]


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
    options = ["--host", host, "--port", str(port), "--threads", str(threads), "--processes", str(processes)]
    options += ["--stall-ms", str(stall_ms), "--stall-every-ms", str(stall_every_ms)]
    options += (["--tls"] if tls else []) + (["--tls-version", tls_version] if tls_version else [])
    options += ["--cipher", cipher] if cipher else []
    engine.serve_command(options, SIBLING_PROGRAM)
    return 0

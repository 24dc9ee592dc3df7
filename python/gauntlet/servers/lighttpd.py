"""lighttpd as a server under test: config rendered from templates/lighttpd.conf.j2 into a private
work dir, run in the foreground (`-D`), `server.max-worker` worker processes when above 1."""

from __future__ import annotations

import os
import signal

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch


def lighttpd_binary() -> str | None:
    return find_binary("lighttpd")


def start_lighttpd(
    *,
    workers: int = 1,
    keepalive: bool = True,
    keepalive_timeout_s: int = 5,
    keepalive_requests: int = 1000,
    access_log: bool = False,
    tls: bool = False,
    max_fds: int = 8192,
    port: int | None = None,
    ready_timeout_s: float = 10.0,
) -> ServerInstance:
    """Start lighttpd on 127.0.0.1 and return once it answers HTTP.

    With `access_log`, each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in
    `workdir/logs/access.log` (the client port tells connections apart); lighttpd buffers the
    lines until `flush_access_log`. The readiness probe is not logged.
    """
    if not 1 <= workers <= 64:
        raise GauntletError(f"lighttpd workers must be 1 to 64, got {workers}", "set workers to 1..8 as the thesis did")
    binary = lighttpd_binary()
    if binary is None:
        raise GauntletError("lighttpd is not installed", "install it: apt-get install lighttpd")
    settings = {
        "workers": workers,
        "max_fds": max_fds,
        "keepalive": keepalive,
        "keepalive_timeout_s": keepalive_timeout_s,
        "keepalive_requests": keepalive_requests,
        "access_log": access_log,
    }
    return launch(
        Launch(
            kind="lighttpd",
            template="lighttpd.conf.j2",
            argv=lambda config: [binary, "-D", "-f", str(config)],
            settings=settings,
            workers=workers if workers > 1 else 0,
            tls=tls,
            port=port,
            ready_timeout_s=ready_timeout_s,
            shared_error_log=True,
        )
    )


def flush_access_log(instance: ServerInstance) -> None:
    """lighttpd buffers access-log lines; SIGHUP (log rotation) makes every process write them."""
    for pid in instance.pids():
        os.kill(pid, signal.SIGHUP)

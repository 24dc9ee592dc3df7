"""nginx as a server under test: config rendered from templates/nginx.conf.j2 into a private work dir.

Runs the system nginx in the foreground (`daemon off`, master + workers) as whoever we are; as root the
workers drop to `nobody`. Config, pid file, logs, temp paths and the docroot all live in the work dir.
"""

from __future__ import annotations

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch


def nginx_binary() -> str | None:
    return find_binary("nginx")


def start_nginx(
    *,
    worker_processes: int = 2,
    worker_connections: int = 4096,
    keepalive: bool = True,
    keepalive_timeout_s: int = 75,
    keepalive_requests: int = 1000,
    access_log: bool = False,
    tls: bool = False,
    port: int | None = None,
    ready_timeout_s: float = 10.0,
) -> ServerInstance:
    """Start nginx on 127.0.0.1 and return once it answers HTTP and all its workers are up.

    The docroot holds the standard workload (as `gauntlet workload write` writes it). `port` defaults
    to a free one.
    With `access_log`, each request is one line `$connection $connection_requests $status
    $body_bytes_sent "$request"` in `workdir/logs/access.log`; the readiness probe is not logged.
    """
    if worker_processes < 1:
        raise GauntletError(
            f"nginx needs at least one worker process, got {worker_processes}",
            "set worker_processes to 1 or more",
        )
    binary = nginx_binary()
    if binary is None:
        raise GauntletError("nginx is not installed", "install it: apt-get install nginx")
    settings = {
        "worker_processes": worker_processes,
        "worker_connections": worker_connections,
        "keepalive": keepalive,
        "keepalive_timeout_s": keepalive_timeout_s,
        "keepalive_requests": keepalive_requests,
        "access_log": access_log,
    }
    return launch(
        Launch(
            kind="nginx",
            template="nginx.conf.j2",
            argv=lambda config: [binary, "-p", f"{config.parent}/", "-c", str(config), "-e", "stderr", "-g", "daemon off;"],
            settings=settings,
            workers=worker_processes,
            tls=tls,
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "temp"),
        )
    )

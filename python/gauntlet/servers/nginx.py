"""nginx as a server under test: config rendered from templates/nginx.conf.j2 into a private work dir.

Runs the system nginx in the foreground (`daemon off`, master + workers) as whoever we are; as root the
workers drop to `nobody`. Config, pid file, logs, temp paths and the docroot all live in the work dir.
nginx speaks FastCGI and uwsgi to backend pools; it cannot fork CGI programs, so CGI pages go
through fcgiwrap (FastCGI in, CGI out).
"""

from __future__ import annotations

import math

from gauntlet.servers.backends.catalog import gateways
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch
from gauntlet.limits import files_per_process
from gauntlet.servers.sizing import SPARE_CONNECTIONS, listen_backlog
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting, unsupported

DEFAULT_WORKERS = 2
#: worker_connections when the run expects fewer: each worker may take that many.
WORKER_CONNECTIONS = 4096
BACKENDS = gateways(cgi="fastcgi")


def nginx_binary() -> str | None:
    return find_binary("nginx")


def start_nginx(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0) -> ServerInstance:
    """Start nginx on 127.0.0.1 and return once it answers HTTP and all its workers are up.

    `spec.workers` is worker_processes (default 2). With `access_log`, each request is one line
    `$connection $connection_requests $status $body_bytes_sent "$request"` in
    `workdir/logs/access.log`; the readiness probe is not logged. With `http2`, the HTTPS port
    offers h2 through ALPN besides HTTP/1.1, and the plain port speaks h2c alone (prior knowledge):
    nginx 1.22 tells the two apart only over TLS.
    """
    h2c_only = spec.http2 and not spec.tls
    if h2c_only and (spec.backend or spec.app):
        raise unsupported("nginx", "h2c with a backend", "its h2c port answers no HTTP/1.1, which checks the dynamic page; use --https")
    binary = installed(nginx_binary(), "nginx", "nginx")
    workers = setting(spec, "workers", DEFAULT_WORKERS)
    connections = worker_connections(spec)
    settings = {
        "worker_processes": workers,
        "worker_connections": connections,
        # Each connection is a file, and one through a backend two; no process gets past the hard limit.
        "worker_rlimit_nofile": min(2 * connections, files_per_process()),
        "backlog": listen_backlog(spec),
        "keepalive": spec.keepalive,
        "keepalive_timeout_s": setting(spec, "keepalive_timeout_s", 75),
        # nginx's 0 would mean no keep-alive at all, not no limit.
        "keepalive_requests": spec.requests_per_connection(1000, unlimited=2**31 - 1),
    }
    return launch(
        Launch(
            spec=spec,
            template="nginx.conf.j2",
            argv=lambda config: [binary, "-p", f"{config.parent}/", "-c", str(config), "-e", "stderr", "-g", "daemon off;"],
            settings=settings,
            gateways=BACKENDS,
            workers=workers,
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "temp"),
            h2c_only=h2c_only,
            holders=workers,
        )
    )


def worker_connections(spec: ServerSpec) -> int:
    """Room in one worker for every connection the run brings (workers share the listening socket
    unevenly: one may take them all), and as many again to a backend when there is one. nginx
    closes idle connections once fewer than a sixteenth of its connections are free, so a sixteenth
    more."""
    clients = math.ceil((spec.expected_connections or 0) * 16 / 15) + SPARE_CONNECTIONS
    return max(WORKER_CONNECTIONS, clients * (2 if spec.backend or spec.app else 1))

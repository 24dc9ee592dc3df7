"""Node.js as a server under test: a small static-file server (templates/node-server.js.j2)
rendered into a private work dir and run by the system `node` in the foreground.

`workers` is the number of processes the cluster module's primary forks (default 2); they share
the listening socket. Node has no access log of its own: the script writes one line per request.
Node cannot drop privileges by itself: as root it serves as root.
"""

from __future__ import annotations

from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.sizing import listen_backlog
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting

DEFAULT_WORKERS = 2
#: Node's own default `server.keepAliveTimeout` (5 s).
DEFAULT_KEEPALIVE_TIMEOUT_S = 5
DEFAULT_KEEPALIVE_REQUESTS = 1000


def node_binary() -> str | None:
    return find_binary("node")


def start_node(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0) -> ServerInstance:
    """Start Node.js on 127.0.0.1 and return once it answers HTTP and all its workers are up.

    Keep-alive off is `Connection: close` on every response; `keepalive_requests` closes a
    connection after that many responses (0: no limit). With `access_log`, each request is one line
    `CLIENT_PORT STATUS BYTES "REQUEST"` in `workdir/logs/access.log`; the readiness probe is not logged.
    """
    binary = installed(node_binary(), "node", "nodejs")
    workers = setting(spec, "workers", DEFAULT_WORKERS)
    return launch(
        Launch(
            spec=spec,
            template="node-server.js.j2",
            argv=lambda script: [binary, str(script)],
            settings={
                "workers": workers,
                "keepalive": spec.keepalive,
                "keepalive_timeout_s": setting(spec, "keepalive_timeout_s", DEFAULT_KEEPALIVE_TIMEOUT_S),
                "keepalive_requests": spec.requests_per_connection(DEFAULT_KEEPALIVE_REQUESTS, unlimited=0),
                "backlog": listen_backlog(spec),
            },
            workers=workers,
            port=port,
            ready_timeout_s=ready_timeout_s,
            holders=workers,
        )
    )

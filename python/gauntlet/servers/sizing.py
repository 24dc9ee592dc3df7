"""A server sized for the connections a run brings to it.

`for_connections` puts the run's most connections on the spec (`expected_connections`); drivers
raise their own connection limits and listen backlog to it. What this machine still caps whatever
the config says — one process's open files (the hard RLIMIT_NOFILE) and the kernel's listen
backlog (net.core.somaxconn) — becomes one line each (`limit_lines`), in each result's
`server_setup` and under its figures.
"""

from __future__ import annotations

import math
from pathlib import Path

from gauntlet.limits import RESERVED_FILES, files_per_process, server_processes_for
from gauntlet.servers.spec import ServerSpec

SOMAXCONN = Path("/proc/sys/net/core/somaxconn")
#: The listen backlog most servers ask for by default (nginx, Apache, Node.js).
DEFAULT_BACKLOG = 511
#: A server's connections besides its clients' (the listening socket, the readiness probe).
SPARE_CONNECTIONS = 64
#: Open files a server keeps per connection, where not one: lighttpd takes connections up to half
#: its descriptors (server.max-connections at most server.max-fds / 2).
FILES_PER_CONNECTION = {"lighttpd": 2}


def for_connections(spec: ServerSpec, connections: int) -> ServerSpec:
    """`spec` with the most connections the server will see at once; the built-in server also gets
    as many processes as they need (when more than one and its processes are not set)."""
    sized = spec.with_(expected_connections=connections)
    processes = server_processes_for(connections)
    if spec.kind != "builtin" or spec.processes is not None or processes == 1:
        return sized
    return sized.with_(processes=processes)


def somaxconn() -> int | None:
    """The kernel's cap on every listen backlog; None when it does not say."""
    try:
        return int(SOMAXCONN.read_text())
    except (OSError, ValueError):
        return None


def listen_backlog(spec: ServerSpec) -> int:
    """The backlog to ask for: room for every connection the run brings at once (at least the usual
    511), no more than the kernel grants, so that the rendered config says what is in force."""
    wanted = max(DEFAULT_BACKLOG, spec.expected_connections or 0)
    cap = somaxconn()
    return wanted if cap is None else min(wanted, cap)


def limit_lines(kind: str, connections: int, holders: int | None) -> list[str]:
    """One line for each limit of this machine that stops a server of `kind` short of
    `connections` at once. `holders`: the processes that share its connections (None: one
    connection per process, as Apache prefork, so no process runs out of files)."""
    lines = []
    cap = somaxconn()
    if cap is not None and cap < connections:
        lines.append(
            f"{kind}: the kernel caps its listen backlog at net.core.somaxconn {cap:,}, below {connections:,} "
            f"connections: those opened at once past it wait for a SYN retransmit "
            f"(sysctl -w net.core.somaxconn={connections})"
        )
    hard = files_per_process()
    per_connection = FILES_PER_CONNECTION.get(kind, 1)
    if holders is not None and (needed := math.ceil(connections * per_connection / holders) + RESERVED_FILES) > hard:
        lines.append(
            f"{kind}: {connections:,} connections over {holders} process{'es' if holders > 1 else ''} need about "
            f"{needed:,} open files in one, past this machine's hard limit of {hard:,}: the connections past it wait "
            f"in the listen backlog or fail (more workers, or raise nofile in /etc/security/limits.conf)"
        )
    return lines

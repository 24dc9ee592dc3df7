"""lighttpd as a server under test: config rendered from templates/lighttpd.conf.j2 into a private
work dir, run in the foreground (`-D`), `server.max-worker` worker processes when above 1. It
forks CGI pages itself, speaks FastCGI to PHP-FPM and uWSGI, and uwsgi through mod_scgi."""

from __future__ import annotations

import signal

import psutil

from gauntlet.errors import GauntletError
from gauntlet.limits import files_per_process
from gauntlet.servers.backends.catalog import gateways
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.process import processes_under
from gauntlet.servers.sizing import FILES_PER_CONNECTION, SPARE_CONNECTIONS
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting

MAX_WORKERS = 64
#: server.max-fds when the run expects fewer connections; lighttpd takes half of its descriptors
#: for connections (server.max-connections), the rest for files and backends.
MAX_FDS = 8192
#: lighttpd's max-keep-alive-requests is 16 bits, and its 0 means no keep-alive at all.
MOST_REQUESTS_PER_CONNECTION = 65535
BACKENDS = gateways(cgi="cgi")
#: lighttpd logs an HTTP/2 connection's preface as one more line when the connection ends.
H2_PREFACE_LOG_MARKER = b'"PRI * HTTP/2.0"'


def lighttpd_binary() -> str | None:
    return find_binary("lighttpd")


def start_lighttpd(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0) -> ServerInstance:
    """Start lighttpd on 127.0.0.1 and return once it answers HTTP.

    `spec.workers` is server.max-worker (default 1: a single process, no workers). With
    `access_log`, each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in
    `workdir/logs/access.log` (the client port tells connections apart); lighttpd buffers the lines,
    so `instance.access_log_lines()` flushes them first. The readiness probe is not logged. With
    `http2`, mod_h2 serves h2 through ALPN over TLS and h2c in clear (prior knowledge or Upgrade);
    each HTTP/2 connection adds a `"PRI * HTTP/2.0"` line, which the request count leaves out.
    """
    workers = setting(spec, "workers", 1)
    if workers > MAX_WORKERS:
        raise GauntletError(f"lighttpd workers must be 1 to {MAX_WORKERS}, got {workers}", "set workers to 1..8 as the thesis did")
    binary = installed(lighttpd_binary(), "lighttpd", "lighttpd")
    settings = {
        "workers": workers,
        # No more than one process may open, so that the rendered config says what is in force.
        "max_fds": min(
            max(MAX_FDS, FILES_PER_CONNECTION["lighttpd"] * ((spec.expected_connections or 0) + SPARE_CONNECTIONS)),
            files_per_process(),
        ),
        "keepalive": spec.keepalive,
        "keepalive_timeout_s": setting(spec, "keepalive_timeout_s", 5),
        "keepalive_requests": min(
            spec.requests_per_connection(1000, unlimited=MOST_REQUESTS_PER_CONNECTION), MOST_REQUESTS_PER_CONNECTION
        ),
    }
    return launch(
        Launch(
            spec=spec,
            template="lighttpd.conf.j2",
            argv=lambda config: [binary, "-D", "-f", str(config)],
            settings=settings,
            gateways=BACKENDS,
            workers=workers if workers > 1 else 0,
            port=port,
            ready_timeout_s=ready_timeout_s,
            shared_error_log=True,
            flush_access_log=flush_access_log,
            preface_log_marker=H2_PREFACE_LOG_MARKER if spec.http2 else None,
        )
    )


def flush_access_log(instance: ServerInstance) -> None:
    """lighttpd buffers access-log lines; SIGHUP (log rotation) makes every lighttpd process write
    them. Only lighttpd's: it would end a CGI child, and make PHP-FPM or uWSGI reload."""
    procs = processes_under(instance.main_pid)
    for proc in procs:
        try:
            if proc.name() == procs[0].name():
                proc.send_signal(signal.SIGHUP)
        except psutil.NoSuchProcess:
            continue

"""Apache httpd as a server under test, with each MPM: `apache-prefork` (a process per
connection), `apache-worker` and `apache-event` (threads in a few processes). The config is
rendered from templates/apache2.conf.j2 and loads only the modules it needs; the system's own
configuration and apache2ctl are never used."""

from __future__ import annotations

from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.backends.catalog import Gateway, gateways
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.sizing import listen_backlog
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting

MPMS = ("prefork", "worker", "event")
MODULES = Path("/usr/lib/apache2/modules")
DEFAULT_PROCESSES = 2
DEFAULT_THREADS_PER_CHILD = 25
#: prefork: the most processes it may grow to (ServerLimit, MaxRequestWorkers), as Debian ships it.
PREFORK_MAX_REQUEST_WORKERS = 150
#: prefork's compiled-in ceiling on ServerLimit (MAX_SERVER_LIMIT); Apache lowers a larger one with a warning.
PREFORK_SERVER_LIMIT_MAX = 200_000
#: Every MPM reaches pools through mod_proxy and forks CGI (mod_cgi, or mod_cgid when threaded).
THREADED_BACKENDS = gateways(cgi="cgi")
#: mod_php only under prefork: Debian's PHP is not thread-safe, and Apache refuses it otherwise.
PREFORK_BACKENDS: dict[str, Gateway] = {**THREADED_BACKENDS, "mod_php": "module"}
#: Why an MPM cannot serve HTTP/2 (the others serve it through mod_http2).
NO_HTTP2 = {"prefork": "mod_http2 turns itself off under prefork (use apache-event or apache-worker)"}


def apache_binary() -> str | None:
    return find_binary("apache2")


def max_request_workers(spec: ServerSpec, mpm: str, processes: int, threads_per_child: int) -> int:
    """The most requests served at once: under prefork the spec's `max_request_workers` (Debian's 150
    when unset), at least the processes it starts; under worker and event processes x threads
    (the registry refuses `max_request_workers` for them)."""
    if mpm != "prefork":
        return processes * threads_per_child
    limit = setting(spec, "max_request_workers", PREFORK_MAX_REQUEST_WORKERS)
    if limit > PREFORK_SERVER_LIMIT_MAX:
        raise GauntletError(
            f"Apache prefork cannot run {limit:,} processes (its ServerLimit is at most {PREFORK_SERVER_LIMIT_MAX:,})",
            f"give max_request_workers 1..{PREFORK_SERVER_LIMIT_MAX:,}",
        )
    if processes > limit:
        raise GauntletError(
            f"Apache prefork cannot start {processes} processes (max_request_workers is {limit})",
            f"give workers 1..{limit}, or raise max_request_workers",
        )
    return limit


def spare_servers(spec: ServerSpec, processes: int) -> tuple[int, int]:
    """prefork's idle processes, at least and at most: the spec's, by default the processes it
    starts."""
    least = setting(spec, "min_spare_servers", processes)
    most = setting(spec, "max_spare_servers", max(processes, least))
    if least > most:
        raise GauntletError(
            f"Apache prefork cannot keep at least {least} and at most {most} idle processes",
            "give min_spare_servers no larger than max_spare_servers",
        )
    return least, most


def backends(mpm: str) -> dict[str, Gateway]:
    return PREFORK_BACKENDS if mpm == "prefork" else THREADED_BACKENDS


def start_apache(
    spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0, modules: Path = MODULES
) -> ServerInstance:
    """Start Apache with the MPM the spec's kind names (apache-prefork, ...) on 127.0.0.1 and
    return once it answers HTTP.

    `spec.workers` is StartServers (default 2; prefork keeps that many idle, or between
    `min_spare_servers` and `max_spare_servers`; worker and event run that many processes of
    `threads_per_child` threads, default 25). With `access_log`, each request is one line `CLIENT_PORT KEEPALIVE_COUNT STATUS BYTES
    "REQUEST"`; the readiness probe is not logged. `modules` is where the modules are (a test
    points it elsewhere to see a missing module fail the start). With `http2` (worker and event;
    the registry refuses prefork), mod_http2 serves h2 through ALPN over TLS and h2c with prior knowledge in clear.
    """
    mpm = spec.kind.removeprefix("apache-")
    if mpm not in MPMS:
        raise GauntletError(f"'{spec.kind}' is not an Apache kind", f"use one of {', '.join('apache-' + m for m in MPMS)}")
    binary = installed(apache_binary() if (MODULES / f"mod_mpm_{mpm}.so").exists() else None, "apache2", "apache2")
    processes = setting(spec, "workers", DEFAULT_PROCESSES)
    threads_per_child = setting(spec, "threads_per_child", DEFAULT_THREADS_PER_CHILD)
    request_workers = max_request_workers(spec, mpm, processes, threads_per_child)
    min_spare, max_spare = spare_servers(spec, processes)
    settings = {
        "modules": modules,
        "mpm": mpm,
        "processes": processes,
        "threads_per_child": threads_per_child,
        "max_request_workers": request_workers,
        "min_spare_servers": min_spare,
        "max_spare_servers": max_spare,
        "listen_backlog": listen_backlog(spec),
        "keepalive": spec.keepalive,
        "keepalive_timeout_s": setting(spec, "keepalive_timeout_s", 5),
        # Apache's MaxKeepAliveRequests 0 is no limit.
        "keepalive_requests": spec.requests_per_connection(1000, unlimited=0),
    }
    return launch(
        Launch(
            spec=spec,
            template="apache2.conf.j2",
            argv=lambda config: [binary, "-f", str(config), "-DFOREGROUND"],
            settings=settings,
            gateways=backends(mpm),
            workers=processes,
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "run"),
            # prefork: a process per connection, so none runs out of files.
            holders=None if mpm == "prefork" else processes,
        )
    )

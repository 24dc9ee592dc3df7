"""Apache httpd as a server under test, with each MPM: `apache-prefork` (a process per
connection), `apache-worker` and `apache-event` (threads in a few processes). The config is
rendered from templates/apache2.conf.j2 and loads only the modules it needs; the system's own
configuration and apache2ctl are never used."""

from __future__ import annotations

from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch

MPMS = ("prefork", "worker", "event")
MODULES = Path("/usr/lib/apache2/modules")


def apache_binary() -> str | None:
    return find_binary("apache2")


def start_apache(
    *,
    mpm: str,
    processes: int = 2,
    threads_per_child: int = 25,
    max_request_workers: int = 150,
    keepalive: bool = True,
    keepalive_timeout_s: int = 5,
    keepalive_requests: int = 1000,
    access_log: bool = False,
    tls: bool = False,
    port: int | None = None,
    ready_timeout_s: float = 10.0,
) -> ServerInstance:
    """Start Apache with one MPM on 127.0.0.1 and return once it answers HTTP.

    `processes` is StartServers (prefork keeps exactly that many, spare limits included; worker
    and event run that many processes of `threads_per_child` threads). With `access_log`, each
    request is one line `CLIENT_PORT KEEPALIVE_COUNT STATUS BYTES "REQUEST"`; the readiness
    probe is not logged.
    """
    if mpm not in MPMS:
        raise GauntletError(f"'{mpm}' is not an Apache MPM", f"use one of {', '.join(MPMS)}")
    if processes < 1 or threads_per_child < 1 or max_request_workers < processes:
        raise GauntletError(
            f"Apache {mpm} cannot run {processes} processes of {threads_per_child} threads "
            f"with MaxRequestWorkers {max_request_workers}",
            "give at least 1 process and thread, and MaxRequestWorkers >= processes",
        )
    binary = apache_binary()
    if binary is None or not (MODULES / f"mod_mpm_{mpm}.so").exists():
        raise GauntletError("apache2 is not installed", "install it: apt-get install apache2")
    settings = {
        "modules": MODULES,
        "mpm": mpm,
        "processes": processes,
        "threads_per_child": threads_per_child,
        "max_request_workers": max_request_workers,
        "keepalive": keepalive,
        "keepalive_timeout_s": keepalive_timeout_s,
        "keepalive_requests": keepalive_requests,
        "access_log": access_log,
    }
    return launch(
        Launch(
            kind=f"apache-{mpm}",
            template="apache2.conf.j2",
            argv=lambda config: [binary, "-f", str(config), "-DFOREGROUND"],
            settings=settings,
            workers=processes,
            tls=tls,
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "run"),
        )
    )

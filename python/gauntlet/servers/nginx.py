"""nginx as a server under test: config rendered from templates/nginx.conf.j2 into a private work dir.

Runs the system nginx in the foreground (`daemon off`, master + workers) as whoever we are; as root the
workers drop to `nobody`. Config, pid file, logs, temp paths and the docroot all live in the work dir.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.base import (
    TEMPLATES,
    ServerInstance,
    new_workdir,
    unprivileged_user,
    find_binary,
    wait_for_workers,
    write_certificate,
    write_docroot,
)
from gauntlet.servers.process import LOOPBACK, free_port, spawn, wait_ready

READY_PATH = "/__gauntlet/ready"


def nginx_binary() -> str | None:
    """The nginx executable, or None."""
    return find_binary("nginx")


def render_config(
    *,
    workdir: Path,
    docroot: Path,
    port: int,
    worker_processes: int,
    worker_connections: int,
    keepalive: bool,
    keepalive_timeout_s: int,
    keepalive_requests: int,
    access_log: bool,
    user: str | None,
    tls: bool = False,
    host: str = LOOPBACK,
) -> str:
    return TEMPLATES.get_template("nginx.conf.j2").render(
        tls=tls,
        workdir=workdir,
        docroot=docroot,
        host=host,
        port=port,
        worker_processes=worker_processes,
        worker_connections=worker_connections,
        keepalive=keepalive,
        keepalive_timeout_s=keepalive_timeout_s,
        keepalive_requests=keepalive_requests,
        access_log=access_log,
        user=user,
        ready_path=READY_PATH,
    )


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
    """Start nginx on 127.0.0.1 and return once it answers HTTP.

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
    workdir = new_workdir("nginx")
    try:
        docroot = workdir / "docroot"
        write_docroot(docroot, workload_files())
        for sub in ("logs", "temp"):
            (workdir / sub).mkdir()
        port = free_port() if port is None else port
        config_text = render_config(
            workdir=workdir,
            docroot=docroot,
            port=port,
            worker_processes=worker_processes,
            worker_connections=worker_connections,
            keepalive=keepalive,
            keepalive_timeout_s=keepalive_timeout_s,
            keepalive_requests=keepalive_requests,
            access_log=access_log,
            user=unprivileged_user() if os.geteuid() == 0 else None,
            tls=tls,
        )
        if tls:
            write_certificate(workdir)
        config_path = workdir / "nginx.conf"
        config_path.write_text(config_text)
        log_path = workdir / "logs" / "error.log"
        argv = [binary, "-p", f"{workdir}/", "-c", str(config_path), "-e", "stderr"]
        proc = spawn([*argv, "-g", "daemon off;"], cwd=workdir, log_path=log_path)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    instance = ServerInstance(
        kind="nginx",
        proc=proc,
        port=port,
        workdir=workdir,
        config_text=config_text,
        scheme="https" if tls else "http",
    )
    try:
        wait_ready(
            proc,
            name="nginx",
            host=LOOPBACK,
            port=port,
            path=READY_PATH,
            deadline_s=ready_timeout_s,
            log_path=log_path,
            tls=tls,
        )
        wait_for_workers(instance, worker_processes, ready_timeout_s, log_path)
    except BaseException:
        instance.stop()
        raise
    return instance

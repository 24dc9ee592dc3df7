"""lighttpd as a server under test: config rendered from templates/lighttpd.conf.j2 into a private
work dir, run in the foreground (`-D`), `server.max-worker` worker processes when above 1."""

from __future__ import annotations

import os
import shutil
import signal

from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.base import (
    TEMPLATES,
    ServerInstance,
    find_binary,
    new_workdir,
    unprivileged_user,
    wait_for_workers,
    write_certificate,
    write_docroot,
)
from gauntlet.servers.process import LOOPBACK, free_port, spawn, wait_ready

READY_PATH = "/__gauntlet/ready"


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
    workdir = new_workdir("lighttpd")
    try:
        docroot = workdir / "docroot"
        write_docroot(docroot, workload_files())
        (workdir / "logs").mkdir()
        if tls:
            write_certificate(workdir)
        port = free_port() if port is None else port
        config_text = TEMPLATES.get_template("lighttpd.conf.j2").render(
            workdir=workdir,
            docroot=docroot,
            host=LOOPBACK,
            port=port,
            user=unprivileged_user() if os.geteuid() == 0 else None,
            workers=workers,
            max_fds=max_fds,
            keepalive=keepalive,
            keepalive_timeout_s=keepalive_timeout_s,
            keepalive_requests=keepalive_requests,
            access_log=access_log,
            tls=tls,
            ready_path=READY_PATH,
        )
        (workdir / "logs").chmod(0o777)
        config_path = workdir / "lighttpd.conf"
        config_path.write_text(config_text)
        log_path = workdir / "logs" / "error.log"
        # lighttpd opens its error log after dropping to `nobody`; its stderr goes there too.
        log_path.touch(mode=0o666)
        log_path.chmod(0o666)
        proc = spawn([binary, "-D", "-f", str(config_path)], cwd=workdir, log_path=log_path)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    instance = ServerInstance(
        kind="lighttpd", proc=proc, port=port, workdir=workdir, config_text=config_text, scheme="https" if tls else "http"
    )
    try:
        wait_ready(
            proc, name="lighttpd", host=LOOPBACK, port=port, path=READY_PATH, deadline_s=ready_timeout_s,
            log_path=log_path, tls=tls,
        )
        if workers > 1:
            wait_for_workers(instance, workers, ready_timeout_s, log_path)
    except BaseException:
        instance.stop()
        raise
    return instance


def flush_access_log(instance: ServerInstance) -> None:
    """lighttpd buffers access-log lines; SIGHUP (log rotation) makes every process write them."""
    for pid in instance.pids():
        os.kill(pid, signal.SIGHUP)

"""The start sequence every config-file driver shares: a private work dir with the standard
workload, an optional certificate, a config rendered from a template, the server in the
foreground, an HTTP readiness probe, and the workers counted before the instance is handed over.
A driver says only what differs: its template's settings and its command line."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gauntlet.engine import workload_files
from gauntlet.servers.base import (
    TEMPLATES,
    ServerInstance,
    new_workdir,
    unprivileged_user,
    wait_for_workers,
    write_certificate,
    write_docroot,
)
from gauntlet.servers.process import LOOPBACK, free_port, spawn, wait_ready

READY_PATH = "/__gauntlet/ready"


@dataclass
class Launch:
    kind: str
    template: str
    #: The command line, given the rendered config's path.
    argv: Callable[[Path], list[str]]
    #: Template parameters besides workdir, docroot, host, port, user, tls and ready_path.
    settings: dict[str, Any] = field(default_factory=dict)
    #: Worker processes to wait for below the main one (0: none).
    workers: int = 0
    tls: bool = False
    port: int | None = None
    ready_timeout_s: float = 10.0
    subdirs: tuple[str, ...] = ("logs",)
    #: The server opens its error log after dropping privileges, so it must be writable by all.
    shared_error_log: bool = False
    #: Environment variables the server needs besides ours, given the work dir (HOME, CATALINA_BASE, ...).
    env: Callable[[Path], dict[str, str]] | None = None
    #: More files rendered with the same parameters: template name -> path inside the work dir.
    extra_templates: dict[str, str] = field(default_factory=dict)


def launch(spec: Launch) -> ServerInstance:
    """Start the server described by `spec` on a loopback port; return once it answers."""
    workdir = new_workdir(spec.kind)
    try:
        docroot = workdir / "docroot"
        write_docroot(docroot, workload_files())
        for sub in spec.subdirs:
            (workdir / sub).mkdir(mode=0o777 if spec.shared_error_log else 0o755)
        if spec.tls:
            write_certificate(workdir)
        port = free_port() if spec.port is None else spec.port
        params = {
            "workdir": workdir,
            "docroot": docroot,
            "host": LOOPBACK,
            "port": port,
            "user": unprivileged_user() if os.geteuid() == 0 else None,
            "tls": spec.tls,
            "ready_path": READY_PATH,
            **spec.settings,
        }
        config_text = TEMPLATES.get_template(spec.template).render(params)
        config_path = workdir / spec.template.removesuffix(".j2")
        config_path.write_text(config_text)
        for template, relative_path in spec.extra_templates.items():
            path = workdir / relative_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(TEMPLATES.get_template(template).render(params))
        log_path = workdir / "logs" / "error.log"
        if spec.shared_error_log:
            (workdir / "logs").chmod(0o777)
            log_path.touch()
            log_path.chmod(0o666)
        env = spec.env(workdir) if spec.env else None
        proc = spawn(spec.argv(config_path), cwd=workdir, log_path=log_path, env=env)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    instance = ServerInstance(
        kind=spec.kind,
        proc=proc,
        port=port,
        workdir=workdir,
        config_text=config_text,
        scheme="https" if spec.tls else "http",
    )
    try:
        wait_ready(
            proc,
            name=spec.kind,
            host=LOOPBACK,
            port=port,
            path=READY_PATH,
            deadline_s=spec.ready_timeout_s,
            log_path=log_path,
            tls=spec.tls,
        )
        if spec.workers:
            wait_for_workers(instance, spec.workers, spec.ready_timeout_s, log_path)
    except BaseException:
        instance.stop()
        raise
    return instance

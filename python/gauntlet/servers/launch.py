"""The start sequence every config-file driver shares: a private work dir with the standard
workload, a cgroup of its own when the machine offers one, an optional certificate, the backend's
page and pool, a config rendered from a template, the server in the foreground, an HTTP readiness
probe, the workers counted and the dynamic page checked before the instance is handed over.
A driver says only what differs: its template's settings, its command line and its backends."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.monitor.cgroup import create_cgroup
from gauntlet.servers.backends.catalog import Gateway, backend_named, gateway_for
from gauntlet.servers.backends.pools import PreparedBackend, prepare_backend
from gauntlet.servers.base import (
    TEMPLATES,
    ServerInstance,
    new_workdir,
    unprivileged_user,
    write_certificate,
    write_docroot,
)
from gauntlet.servers.process import LOOPBACK, free_port, http_get, log_tail, spawn, stop_tree, wait_for_tree, wait_ready
from gauntlet.servers.spec import ServerSpec

READY_PATH = "/__gauntlet/ready"


@dataclass
class Launch:
    spec: ServerSpec
    template: str
    #: The command line, given the rendered config's path.
    argv: Callable[[Path], list[str]]
    #: Template parameters besides workdir, docroot, host, port, user, tls, tls_pin, access_log,
    #: backend and ready_path.
    settings: dict[str, Any] = field(default_factory=dict)
    #: The backends the driver supports, and how the server reaches each (catalog.py).
    gateways: Mapping[str, Gateway] = field(default_factory=dict)
    #: Worker processes to wait for below the main one (0: none).
    workers: int = 0
    port: int | None = None
    ready_timeout_s: float = 10.0
    subdirs: tuple[str, ...] = ("logs",)
    #: The server opens its error log after dropping privileges, so it must be writable by all.
    shared_error_log: bool = False
    #: Makes a server that buffers its access log write it out (lighttpd).
    flush_access_log: Callable[[ServerInstance], None] | None = None


def launch(spec: Launch) -> ServerInstance:
    """Start the server described by `spec` on a loopback port; return once it answers and, with a
    backend, once its dynamic page comes back exact."""
    kind = spec.spec.kind
    gateway = gateway_for(kind, spec.gateways, spec.spec.backend) if spec.spec.backend else None
    workdir = new_workdir(kind)
    cgroup = create_cgroup(workdir.name)
    backend: PreparedBackend | None = None
    try:
        docroot = workdir / "docroot"
        write_docroot(docroot, workload_files())
        for sub in spec.subdirs:
            (workdir / sub).mkdir(mode=0o777 if spec.shared_error_log else 0o755)
        if spec.spec.tls:
            write_certificate(workdir)
        if gateway is not None:
            backend = prepare_backend(spec.spec, gateway, workdir, docroot, cgroup, spec.ready_timeout_s)
        port = free_port() if spec.port is None else spec.port
        config_text = TEMPLATES.get_template(spec.template).render(
            workdir=workdir,
            docroot=docroot,
            host=LOOPBACK,
            port=port,
            user=unprivileged_user() if os.geteuid() == 0 else None,
            tls=spec.spec.tls,
            tls_pin=spec.spec.tls_pin(),
            access_log=spec.spec.access_log,
            backend=backend.config if backend else None,
            ready_path=READY_PATH,
            **spec.settings,
        )
        config_path = workdir / spec.template.removesuffix(".j2")
        config_path.write_text(config_text)
        log_path = workdir / "logs" / "error.log"
        if spec.shared_error_log:
            (workdir / "logs").chmod(0o777)
            log_path.touch()
            log_path.chmod(0o666)
        proc = spawn(spec.argv(config_path), cwd=workdir, log_path=log_path, cgroup=cgroup)
    except BaseException:
        if backend is not None and backend.process is not None:
            stop_tree(backend.process.proc, sig=backend.process.stop_signal)
        if cgroup is not None:
            cgroup.remove()
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    pool = backend.process if backend else None
    if backend is not None and pool is not None:
        config_text += f"\n# ---- {pool.name}\n{backend.config_text}"
    instance = ServerInstance(
        kind=kind,
        proc=proc,
        port=port,
        workdir=workdir,
        config_text=config_text,
        scheme="https" if spec.spec.tls else "http",
        spec=spec.spec,
        backends=[pool] if pool else [],
        cgroup=cgroup,
        access_log=workdir / "logs" / "access.log" if spec.spec.access_log else None,
        flush_access_log=spec.flush_access_log,
    )
    try:
        wait_ready(
            proc,
            name=kind,
            host=LOOPBACK,
            port=port,
            path=READY_PATH,
            deadline_s=spec.ready_timeout_s,
            log_path=log_path,
            tls=spec.spec.tls,
        )
        if spec.workers:
            wait_for_tree(proc, 1 + spec.workers, name=kind, timeout_s=spec.ready_timeout_s, log_path=log_path)
        if backend is not None:
            check_page(instance, backend, log_path)
    except BaseException:
        instance.stop()
        raise
    return instance


def check_page(instance: ServerInstance, backend: PreparedBackend, log_path: Path) -> None:
    """One GET of the dynamic page: a backend that answers wrong fails the start, not the run."""
    page = backend_named(backend.config.name).page
    answer = http_get(instance.host, instance.port, page.path, tls=instance.scheme == "https", timeout_s=10.0)
    if answer == (200, page.expected_body()):
        return
    got = "no HTTP response" if answer is None else f"status {answer[0]} and {len(answer[1])} bytes"
    logs = f"its log ends: {log_tail(log_path)}"
    if backend.log_path is not None:
        logs += f"; {backend.process.name if backend.process else 'the backend'}'s log ends: {log_tail(backend.log_path)}"
    raise GauntletError(
        f"{instance.kind} with {backend.config.name} gave {got} for {page.path} instead of the page; {logs}",
        "fix what the logs say",
    )

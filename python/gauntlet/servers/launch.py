"""The start sequence every config-file driver shares: a private work dir with the standard
workload, a cgroup of its own when the machine offers one, an optional certificate, the backend's
page and pool, a config rendered from a template, the server in the foreground, an HTTP readiness
probe, the workers counted and the dynamic page checked before the instance is handed over.
A driver says only what differs: its template's settings, its command line and its backends."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.apps import prepare_app, startup_checks
from gauntlet.servers.apps.wordpress import PreparedApp, check_app_pages
from gauntlet.servers.backends.catalog import Gateway, backend_named, gateway_for
from gauntlet.servers.backends.pools import PreparedBackend, prepare_backend
from gauntlet.servers.base import (
    TEMPLATES,
    ServerInstance,
    unprivileged_user,
    write_certificate,
    write_docroot,
)
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import (
    LOOPBACK,
    READY_PATH,
    free_port,
    http_get,
    log_tail,
    spawn,
    stop_processes,
    wait_for_processes,
    wait_ready,
)
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.tls_pin import TlsPin, tls_pin
from gauntlet.servers.tree import link_tree

ERROR_LOG = Path("logs") / "error.log"
ACCESS_LOG = Path("logs") / "access.log"


@dataclass
class Launch:
    spec: ServerSpec
    template: str
    #: The command line, given the rendered config's path.
    argv: Callable[[Path], list[str]]
    #: Template parameters besides workdir, docroot, host, port, user, tls, http2, tls_pin, access_log,
    #: backend and ready_path (a setting of the same name wins).
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
    #: Marks access-log lines that are no request (ServerInstance.preface_log_marker).
    preface_log_marker: bytes | None = None
    #: Environment variables the server needs besides ours, given the work dir (HOME, CATALINA_BASE, ...).
    env: Callable[[Path], dict[str, str]] | None = None
    #: More files rendered with the same parameters: template name -> path inside the work dir.
    extra_templates: dict[str, str] = field(default_factory=dict)
    #: The port speaks HTTP/2 alone (nginx's h2c): probed with the HTTP/2 preface, not an HTTP/1.1 GET.
    h2c_only: bool = False
    #: The processes that share the server's connections, each under its own open-files limit
    #: (None: a process per connection, as Apache prefork).
    holders: int | None = 1


@dataclass
class _Spawned:
    proc: subprocess.Popen[bytes]
    port: int
    https_port: int | None
    config_text: str
    backend: PreparedBackend | None
    app: PreparedApp | None = None


def launch(setup: Launch) -> ServerInstance:
    """Start the server `setup` describes on a loopback port; return once it answers, its workers
    are up and, with a backend, once its dynamic page comes back exact."""
    spec = setup.spec
    gateway = gateway_for(spec.kind, setup.gateways, spec.backend) if spec.backend else None
    pin = tls_pin(spec)  # a pin that cannot work fails here, before anything starts
    premises = Premises.open(spec.kind)
    workdir = premises.workdir
    try:
        spawned = _spawn(setup, gateway, premises, pin)
    except BaseException:
        premises.release()
        raise
    pool = spawned.backend.process if spawned.backend else None
    app = spawned.app
    instance = ServerInstance(
        kind=spec.kind,
        proc=spawned.proc,
        port=spawned.port,
        premises=premises,
        config_text=spawned.config_text
        + (f"\n# ---- {pool.name}\n{pool.config_text}" if pool else "")
        + (f"\n# ---- {app.config.name}\n{app.config_text}" if app else ""),
        scheme="https" if spec.tls else "http",
        spec=spec,
        # Stopped in this order after the server: the PHP pool, then the database (BeSim) it talks to.
        backends=[*([pool] if pool else []), *([app.service] if app else [])],
        access_log=workdir / ACCESS_LOG if spec.access_log else None,
        flush_access_log=setup.flush_access_log,
        preface_log_marker=setup.preface_log_marker,
        holders=setup.holders,
        https_port=spawned.https_port,
        h2c_only=setup.h2c_only,
    )
    try:
        log_path = workdir / ERROR_LOG
        wait_ready(
            spawned.proc,
            name=spec.kind,
            host=LOOPBACK,
            port=spawned.port,
            path=READY_PATH,
            deadline_s=setup.ready_timeout_s,
            log_path=log_path,
            tls=spec.tls,
            h2c=setup.h2c_only,
        )
        if spawned.https_port is not None:
            wait_ready(
                spawned.proc, name=spec.kind, host=LOOPBACK, port=spawned.https_port, path=READY_PATH,
                deadline_s=setup.ready_timeout_s, log_path=log_path, tls=True,
            )
        if setup.workers:
            wait_for_processes(spawned.proc, 1 + setup.workers, name=spec.kind, timeout_s=setup.ready_timeout_s, log_path=log_path)
        if spawned.backend is not None:
            check_page(instance, spawned.backend)
        if app is not None:
            check_app_pages(instance, ERROR_LOG, startup_checks(spec))
    except BaseException:
        instance.stop()
        raise
    return instance


def _spawn(setup: Launch, gateway: Gateway | None, premises: Premises, pin: TlsPin) -> _Spawned:
    """Fill the work dir, start the backend's pool if any, render the config, start the server."""
    spec = setup.spec
    workdir = premises.workdir
    docroot = workdir / "docroot"
    write_docroot(docroot, workload_files())
    link_tree(docroot)
    for sub in setup.subdirs:
        (workdir / sub).mkdir(mode=0o777 if setup.shared_error_log else 0o755)
    if spec.tls or spec.also_https:
        write_certificate(workdir)
    app = prepare_app(spec, premises, docroot, setup.ready_timeout_s) if spec.app else None
    backend = None
    try:
        backend = prepare_backend(spec, gateway, premises, docroot, setup.ready_timeout_s) if gateway else None
        port = free_port() if setup.port is None else setup.port
        https_port = free_port() if spec.also_https else None
        params = {
            "workdir": workdir,
            "docroot": docroot,
            "host": LOOPBACK,
            "port": port,
            "https_port": https_port,
            "user": unprivileged_user() if os.geteuid() == 0 else None,
            "tls": spec.tls,
            "http2": spec.http2,
            "tls_pin": pin,
            "access_log": spec.access_log,
            "backend": backend.config if backend else None,
            "ready_path": READY_PATH,
            "app": app.config if app else None,
            "opcache": spec.opcache,
            **setup.settings,
        }
        config_text = TEMPLATES.get_template(setup.template).render(params)
        config_path = workdir / setup.template.removesuffix(".j2")
        config_path.write_text(config_text)
        for template, relative_path in setup.extra_templates.items():
            path = workdir / relative_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(TEMPLATES.get_template(template).render(params))
        log_path = workdir / ERROR_LOG
        if setup.shared_error_log:
            log_path.parent.chmod(0o777)  # mkdir's mode went through the umask
            log_path.touch()
            log_path.chmod(0o666)
        env = setup.env(workdir) if setup.env else None
        proc = spawn(setup.argv(config_path), cwd=workdir, log_path=log_path, env=env, premises=premises)
    except BaseException:
        started = [*([backend.process] if backend and backend.process else []), *([app.service] if app else [])]
        for process in started:
            stop_processes(process.proc, sig=process.stop_signal)
        raise
    return _Spawned(proc, port, https_port, config_text, backend, app)


def check_page(instance: ServerInstance, backend: PreparedBackend) -> None:
    """One GET of the dynamic page: a backend that answers wrong fails the start, not the run."""
    page = backend_named(backend.config.name).page
    answer = http_get(instance.host, instance.port, page.path, tls=instance.scheme == "https", timeout_s=10.0)
    if answer == (200, page.expected_body()):
        return
    got = "no HTTP response" if answer is None else f"status {answer[0]} and {len(answer[1])} bytes"
    logs = f"its log ends: {log_tail(instance.workdir / ERROR_LOG)}"
    if backend.process is not None:
        logs += f"; {backend.process.name}'s log ends: {log_tail(backend.process.log_path)}"
    raise GauntletError(
        f"{instance.kind} with {backend.config.name} gave {got} for {page.path} instead of the page; {logs}",
        "fix what the logs say",
    )

"""A backend for one server instance: its page in the docroot and, for PHP-FPM, uWSGI and
fcgiwrap, its pool process, started in the instance's work dir and cgroup before the server, and
ready (listening, every process forked) before the server starts.

The pool listens on a unix socket in the work dir or on a loopback TCP port (`backend_socket`);
as root its processes run as `nobody`, like the server's workers.
"""

from __future__ import annotations

import os
import pwd
import shlex
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.backends.catalog import (
    FCGIWRAP,
    PHP_FPM,
    UWSGI,
    Backend,
    Gateway,
    Pool,
    backend_named,
    missing_packages,
    pool_for,
)
from gauntlet.servers.base import TEMPLATES, BackendProcess, unprivileged_user, write_docroot
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import LOOPBACK, accepts_connections, free_port, spawn, stop_processes, wait_for_processes, wait_until
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import setting

DEFAULT_WORKERS = 2
BACKLOG = 1024
BACKEND_DIR = "backend"


@dataclass(frozen=True)
class BackendConfig:
    """What a server's config template needs to reach its backend."""

    name: str
    gateway: Gateway
    #: The page's URL path, and its file in the docroot.
    path: str
    script: Path
    #: Where the pool listens: a unix socket, or a loopback TCP port (None without a pool).
    socket_path: Path | None = None
    port: int | None = None
    host: str = LOOPBACK
    #: The server module that runs the page (mod_php's .so).
    module: str | None = None

    @property
    def file(self) -> str:
        return self.script.name


@dataclass(frozen=True)
class PreparedBackend:
    config: BackendConfig
    #: The pool process; None when the server runs the page itself.
    process: BackendProcess | None = None


@dataclass(frozen=True)
class PoolLaunch:
    argv: list[str]
    config_text: str
    stop_signal: int
    #: The pool's processes once it is up: its master and its workers.
    processes: int


@dataclass(frozen=True)
class PoolContext:
    spec: ServerSpec
    gateway: Gateway
    workdir: Path
    run_dir: Path
    script: Path
    socket_path: Path | None
    port: int | None
    log_path: Path

    @property
    def workers(self) -> int:
        return setting(self.spec, "backend_workers", DEFAULT_WORKERS)

    @property
    def listen(self) -> str:
        return str(self.socket_path) if self.socket_path else f"{LOOPBACK}:{self.port}"

    def render(self, template: str, **settings: object) -> str:
        text = TEMPLATES.get_template(template).render(
            workdir=self.workdir,
            run_dir=self.run_dir,
            log_path=self.log_path,
            script=self.script,
            listen=self.listen,
            socket_path=self.socket_path,
            workers=self.workers,
            backlog=backlog(),
            user=unprivileged_user() if os.geteuid() == 0 else None,
            **settings,
        )
        (self.workdir / template.removesuffix(".j2")).write_text(text)
        return text


def backlog() -> int:
    """The pools' listen queue, within the kernel's limit (uWSGI refuses to start above it)."""
    try:
        with open("/proc/sys/net/core/somaxconn") as limit:
            return min(BACKLOG, int(limit.read()))
    except (OSError, ValueError):
        return 128


def _program(path: str | None) -> str:
    assert path is not None, "checked by missing_packages"
    return path


def _php_fpm(context: PoolContext) -> PoolLaunch:
    text = context.render("php-fpm.conf.j2", opcache=context.spec.opcache)
    argv = [_program(PHP_FPM.find()), "--nodaemonize", "--fpm-config", str(context.workdir / "php-fpm.conf")]
    # SIGQUIT: finish the requests in flight, then exit (SIGTERM drops them).
    return PoolLaunch(argv, text, signal.SIGQUIT, 1 + context.workers)


def _uwsgi(context: PoolContext) -> PoolLaunch:
    text = context.render("uwsgi.ini.j2", protocol=context.gateway, threads=setting(context.spec, "backend_threads", 1))
    argv = [_program(UWSGI.find()), "--ini", str(context.workdir / "uwsgi.ini")]
    # SIGINT stops uWSGI; its SIGTERM means reload unless die-on-term, which the ini sets too.
    return PoolLaunch(argv, text, signal.SIGINT, 1 + context.workers)


def _fcgiwrap(context: PoolContext) -> PoolLaunch:
    address = f"unix:{context.socket_path}" if context.socket_path else f"tcp:{LOOPBACK}:{context.port}"
    argv = [_program(FCGIWRAP.find()), "-c", str(context.workers), "-s", address]
    if os.geteuid() == 0:
        # fcgiwrap has no user option and would run the CGI pages as root.
        user, group = unprivileged_user().split()
        argv = ["setpriv", f"--reuid={user}", f"--regid={group}", "--clear-groups", *argv]
    return PoolLaunch(argv, shlex.join(argv), signal.SIGTERM, 1 + context.workers)


POOLS: dict[Pool, Callable[[PoolContext], PoolLaunch]] = {
    "php-fpm": _php_fpm,
    "uwsgi": _uwsgi,
    "fcgiwrap": _fcgiwrap,
}


def prepare_backend(
    spec: ServerSpec, gateway: Gateway, premises: Premises, docroot: Path, timeout_s: float
) -> PreparedBackend:
    """Write the backend's page into the docroot and start its pool, if it has one."""
    assert spec.backend is not None
    backend = backend_named(spec.backend)
    missing = missing_packages(backend, gateway)
    if missing:
        raise GauntletError(
            f"{backend.name} is not installed here", f"install it: apt-get install {' '.join(missing)}"
        )
    page = backend.page
    write_docroot(docroot, {page.name: page.text()}, mode=0o755 if page.executable else 0o644)
    config = BackendConfig(
        backend.name, gateway, page.path, docroot / page.name, module=backend.programs[0].find() if gateway == "module" else None
    )
    pool = pool_for(backend, gateway)
    if pool is None:
        return PreparedBackend(config)
    return _start_pool(pool, backend, config, spec, premises, timeout_s)


def _start_pool(
    pool: Pool,
    backend: Backend,
    config: BackendConfig,
    spec: ServerSpec,
    premises: Premises,
    timeout_s: float,
) -> PreparedBackend:
    workdir = premises.workdir
    run_dir = workdir / BACKEND_DIR
    run_dir.mkdir(mode=0o755)
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(run_dir, nobody.pw_uid, nobody.pw_gid)  # fcgiwrap makes its socket as nobody
    if spec.backend_socket not in ("unix", "tcp"):
        raise GauntletError(f"backend_socket '{spec.backend_socket}' is unknown", "use unix or tcp")
    unix = spec.backend_socket == "unix"
    context = PoolContext(
        spec=spec,
        gateway=config.gateway,
        workdir=workdir,
        run_dir=run_dir,
        script=config.script,
        socket_path=run_dir / f"{pool}.sock" if unix else None,
        port=None if unix else free_port(),
        log_path=workdir / "logs" / f"{pool}.log",
    )
    launch = POOLS[pool](context)
    proc = spawn(launch.argv, cwd=workdir, log_path=context.log_path, premises=premises)
    address: str | tuple[str, int] = str(context.socket_path) if unix else (LOOPBACK, context.port or 0)
    try:
        wait_until(
            proc,
            lambda: accepts_connections(address),
            name=f"{pool} ({backend.name})",
            what=f"listen on {context.listen}",
            deadline_s=timeout_s,
            log_path=context.log_path,
        )
        wait_for_processes(proc, launch.processes, name=pool, timeout_s=timeout_s, log_path=context.log_path)
    except BaseException:
        stop_processes(proc, sig=launch.stop_signal)
        raise
    return PreparedBackend(
        replace(config, socket_path=context.socket_path, port=context.port),
        BackendProcess(pool, proc, launch.stop_signal, launch.config_text, context.log_path, context.port),
    )

"""Every server kind by its one name: is it installed (which version, or how to install it), which
backends it runs, and start it from a ServerSpec.

Adding a kind is one `Kind` entry in KINDS: its Debian package, how to find its binary and print
its version, its start function (`start(spec, *, port=None, ready_timeout_s=...)`) and, when its
driver runs dynamic pages, the backends it supports with their gateway (backends/catalog.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from gauntlet import __version__
from gauntlet.errors import GauntletError
from gauntlet.servers import apache, caddy, h2o, lighttpd, nginx, node, tomcat
from gauntlet.servers.apps import APPS, app_named, app_refusal
from gauntlet.servers.apache import apache_binary, start_apache
from gauntlet.servers.backends.catalog import (
    BACKENDS, Gateway, backend_named, gateway_for, missing_packages, unsupported_reason,
)
from gauntlet.servers.base import ServerInstance, program_version
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.caddy import caddy_binary, start_caddy
from gauntlet.servers.erlang_vm import ERLANG_KINDS, application_version, otp_version
from gauntlet.servers.h2o import h2o_binary, start_h2o
from gauntlet.servers.inets import inets_binary, start_inets
from gauntlet.servers.lighttpd import lighttpd_binary, start_lighttpd
from gauntlet.servers.mochiweb import mochiweb_binary, start_mochiweb
from gauntlet.servers.nginx import nginx_binary, start_nginx
from gauntlet.servers.node import node_binary, start_node
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import setting, unsupported
from gauntlet.servers.tomcat import start_tomcat, tomcat_binary
from gauntlet.servers.yaws import start_yaws, yaws_binary, yaws_version


class Start(Protocol):
    def __call__(self, spec: ServerSpec, *, port: int | None = ..., ready_timeout_s: float = ...) -> ServerInstance: ...


@dataclass(frozen=True)
class Availability:
    kind: str
    #: The installed version, None when the kind is not available here.
    version: str | None
    #: Why it is not available and how to fix it (None when it is).
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.version is not None


@dataclass(frozen=True)
class Kind:
    name: str
    package: str
    binary: Callable[[], str | None]
    version_flag: str
    start: Start
    #: The backends its driver runs, and how the server reaches each; empty: static files only.
    backends: Mapping[str, Gateway] = field(default_factory=dict)
    #: The version when the binary does not print it with `version_flag`.
    version: Callable[[], str] | None = None
    #: False for servers that cannot be configured to close connections themselves; they close
    #: when the client asks (Connection: close), which is what a case without keep-alive sends.
    keepalive_switch: bool = True
    #: What `workers` counts for this kind, and how many it runs when the spec leaves it unset.
    worker_unit: str = "processes"
    default_workers: Callable[[], int] = lambda: 1
    #: Why its driver cannot serve HTTP/2 (None: it serves h2 and h2c when a spec asks).
    no_http2: str | None = "its driver serves HTTP/1.1 only"
    #: Its driver can listen on an HTTP and an HTTPS port at once (`ServerSpec.also_https`).
    also_https: bool = False

    def availability(self) -> Availability:
        binary = self.binary()
        if binary is None:
            return Availability(self.name, None, f"not installed: apt-get install {self.package}")
        return Availability(self.name, self.version() if self.version else program_version([binary, self.version_flag]))


BUILTIN_THREADS = 2


def cpu_count() -> int:
    """The default of the kinds that run one thread or scheduler per CPU (Go, the Erlang VM)."""
    return os.cpu_count() or 1


def _start_builtin(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0) -> ServerInstance:
    if port is not None:
        raise unsupported("builtin", "a fixed port", "it binds a free port itself and announces it")
    if not spec.keepalive:
        raise unsupported("builtin", "keep-alive off", "it keeps a connection open as long as the client does")
    if spec.access_log:
        raise unsupported("builtin", "an access log", "it counts requests and connections at /__gauntlet/stats")
    if spec.keepalive_requests or spec.keepalive_timeout_s is not None:
        raise unsupported("builtin", "keep-alive limits", "it keeps a connection open as long as the client does")
    return start_builtin(
        threads=setting(spec, "workers", BUILTIN_THREADS),
        processes=setting(spec, "processes", 1),
        tls=spec.tls,
        tls_version=spec.tls_version,
        cipher=spec.cipher,
        ready_timeout_s=ready_timeout_s,
    )


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("builtin", "gauntlet", lambda: sys.executable, "", _start_builtin, version=lambda: __version__,
             keepalive_switch=False, worker_unit="threads", default_workers=lambda: BUILTIN_THREADS,
             no_http2="it speaks HTTP/1.x only"),
        Kind("nginx", "nginx", nginx_binary, "-v", start_nginx, backends=nginx.BACKENDS,
             default_workers=lambda: nginx.DEFAULT_WORKERS, no_http2=None),
        *(
            Kind(f"apache-{mpm}", "apache2", apache_binary, "-v", start_apache, backends=apache.backends(mpm),
                 default_workers=lambda: apache.DEFAULT_PROCESSES, no_http2=apache.NO_HTTP2.get(mpm), also_https=True)
            for mpm in ("prefork", "worker", "event")
        ),
        Kind("lighttpd", "lighttpd", lighttpd_binary, "-v", start_lighttpd, backends=lighttpd.BACKENDS, no_http2=None),
        Kind("h2o", "h2o", h2o_binary, "--version", start_h2o, backends=h2o.BACKENDS, keepalive_switch=False,
             worker_unit="threads", default_workers=lambda: h2o.DEFAULT_THREADS, no_http2=None),
        Kind("caddy", "caddy", caddy_binary, "version", start_caddy, backends=caddy.BACKENDS,
             worker_unit="threads (GOMAXPROCS)", default_workers=cpu_count, no_http2=None),
        Kind("tomcat", "tomcat10", tomcat_binary, "version", start_tomcat, worker_unit="threads (at most)",
             default_workers=lambda: tomcat.DEFAULT_MAX_THREADS, no_http2=None, also_https=True),
        Kind("yaws", "yaws", yaws_binary, "--version", start_yaws, version=yaws_version,
             worker_unit="schedulers", default_workers=cpu_count, no_http2="yaws 2.1 speaks HTTP/1.1 only"),
        Kind("node", "nodejs", node_binary, "--version", start_node, default_workers=lambda: node.DEFAULT_WORKERS),
        # inets is part of Erlang/OTP, whose release its Debian package carries.
        Kind("inets", "erlang-inets", inets_binary, "", start_inets, version=otp_version,
             worker_unit="schedulers", default_workers=cpu_count),
        Kind("mochiweb", "erlang-mochiweb", mochiweb_binary, "", start_mochiweb,
             version=lambda: application_version("mochiweb"), worker_unit="schedulers", default_workers=cpu_count),
    )
}


def kind_of(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise GauntletError(f"'{name}' is not a server kind", f"use one of {', '.join(KINDS)}") from None


def server_keepalive(kind: str, keepalive: bool) -> bool:
    """The server's keep-alive setting for a case whose client keeps connections open or not: off
    only where the server has a switch for it; the others close when the client asks."""
    return keepalive or not kind_of(kind).keepalive_switch


@cache
def availability(name: str) -> Availability:
    """Asked once per process: what is installed does not change while Gauntlet runs."""
    return kind_of(name).availability()


@cache
def backend_version(name: str) -> str:
    return backend_named(name).programs[0].version()


@dataclass(frozen=True)
class Combination:
    """A server kind with a backend: how the server reaches it, or why it cannot."""

    kind: str
    backend: str
    #: None when the server cannot run this backend (see `reason`).
    gateway: Gateway | None
    #: "unsupported: why", or "not installed: apt-get install ...", or None when it can run here.
    reason: str | None
    #: The backend's version, when it can run here.
    version: str | None = None

    @property
    def supported(self) -> bool:
        return self.gateway is not None

    @property
    def available(self) -> bool:
        return self.reason is None


def combination(kind: Kind, backend: str) -> Combination:
    why_not = unsupported_reason(kind.name, kind.backends, backend)
    if why_not is not None:
        return Combination(kind.name, backend, None, f"unsupported: {why_not}")
    gateway = kind.backends[backend]
    missing = missing_packages(backend_named(backend), gateway)
    if kind.binary() is None:
        missing.insert(0, kind.package)
    if missing:
        return Combination(kind.name, backend, gateway, f"not installed: apt-get install {' '.join(missing)}")
    return Combination(kind.name, backend, gateway, None, backend_version(backend))


def combinations(kinds: Iterable[Kind] | None = None) -> list[Combination]:
    """Every kind with every backend: the one table `gauntlet servers`, suites and tests read."""
    return [combination(kind, backend) for kind in (kinds or KINDS.values()) for backend in BACKENDS]


@dataclass(frozen=True)
class AppCombination:
    """An application on a server kind through one backend: runs here, or why not."""

    app: str
    kind: str
    backend: str
    #: None when it can run here; "unsupported: ..." or "not installed: apt-get install ..." otherwise.
    reason: str | None


def app_combinations() -> list[AppCombination]:
    """Every application on every kind through each of its backends, and as JSP on Tomcat
    (`gauntlet servers`)."""
    found = []
    for app in APPS.values():
        missing = app.missing_packages()
        if app.jsp:
            tomcat = availability("tomcat")
            found.append(AppCombination(app.name, "tomcat", "jsp", None if tomcat.available else tomcat.reason))
        for kind in KINDS.values():
            for backend in app.backends:
                pair = combination(kind, backend)
                reason = pair.reason
                if reason is None and missing:
                    reason = f"not installed: apt-get install {' '.join(missing)}"
                found.append(AppCombination(app.name, kind.name, backend, reason))
    return found


def check_spec(spec: ServerSpec) -> tuple[Availability, Combination | None]:
    """Refuse, in one line with the fix, a spec that cannot run here, before anything starts: first a
    combination that cannot work anywhere (so the cause named is not a missing package whose install
    would not help), then a kind, backend or application that is not installed."""
    kind = kind_of(spec.kind)
    if spec.http2 and kind.no_http2 is not None:
        raise GauntletError(f"{spec.kind} cannot serve HTTP/2: {kind.no_http2}", f"leave --http2 out of {spec.kind} cases")
    if spec.also_https and (spec.tls or not kind.also_https):
        why = "it is served over TLS already" if spec.tls else "its driver listens on one port"
        raise GauntletError(
            f"{spec.kind} cannot add an HTTPS port: {why}", "use protocol http+https on apache-* or tomcat, without tls"
        )
    for name in ("max_request_workers", "min_spare_servers", "max_spare_servers"):
        if getattr(spec, name) is not None and spec.kind != "apache-prefork":
            raise unsupported(spec.kind, name, "it is an Apache prefork setting")
    if spec.java_heap_mb is not None and spec.kind != "tomcat":
        raise unsupported(spec.kind, "java_heap_mb", "it is Tomcat's JVM heap")
    if not spec.scheduler_busy_wait and spec.kind not in ERLANG_KINDS:
        raise unsupported(spec.kind, "scheduler_busy_wait", f"it is the Erlang VM's ({', '.join(ERLANG_KINDS)})")
    if spec.app is not None and spec.backend is None and spec.kind != "tomcat":
        raise GauntletError(f"{spec.app} needs a PHP backend", "add --backend php-fpm (or mod_php on apache-prefork)")
    refusal = app_refusal(spec)
    if refusal is not None:
        raise GauntletError(*refusal)
    if spec.backend is not None:
        gateway_for(spec.kind, kind.backends, spec.backend)
    found = availability(spec.kind)
    if not found.available:
        raise GauntletError(f"{spec.kind} is {found.reason}", "install it or leave it out of the case")
    backend = None if spec.backend is None else combination(kind, spec.backend)
    if backend is not None and backend.reason is not None:
        raise GauntletError(
            f"{spec.backend} on {spec.kind} is {backend.reason}", "pick a combination `gauntlet servers` lists as available"
        )
    missing = app_named(spec.app).missing_packages(spec.apcu) if spec.app is not None else []
    if missing:
        raise GauntletError(f"{spec.app} is not installed here", f"install it: apt-get install {' '.join(missing)}")
    return found, backend


def start_server(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float | None = None) -> ServerInstance:
    """Start the server a case names, with its backend (and application); what cannot run is
    refused first (`check_spec`). `port` and `ready_timeout_s` are for tests (a taken port, a slow machine)."""
    found, backend = check_spec(spec)
    knobs: dict[str, Any] = {}
    if port is not None:
        knobs["port"] = port
    if ready_timeout_s is not None:
        knobs["ready_timeout_s"] = ready_timeout_s
    instance = kind_of(spec.kind).start(spec, **knobs)
    instance.spec = spec
    instance.version = found.version
    instance.backend_version = backend.version if backend else None
    kind = kind_of(spec.kind)
    instance.workers = spec.workers if spec.workers is not None else kind.default_workers()
    instance.worker_unit = kind.worker_unit
    return instance

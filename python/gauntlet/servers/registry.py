"""Every server kind by its one name: is it installed (which version, or how to install it), and
start it from a ServerSpec."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from gauntlet import __version__
from gauntlet.errors import GauntletError
from gauntlet.servers.apache import apache_binary, start_apache
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.caddy import caddy_binary, start_caddy
from gauntlet.servers.h2o import h2o_binary, start_h2o
from gauntlet.servers.lighttpd import lighttpd_binary, start_lighttpd
from gauntlet.servers.nginx import nginx_binary, start_nginx
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.tomcat import start_tomcat, tomcat_binary
from gauntlet.servers.yaws import start_yaws, yaws_binary

VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


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


def _version_of(argv: list[str]) -> str:
    """The first version number a program prints about itself (some print it on stderr)."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    found = VERSION.search(done.stdout + done.stderr)
    return found.group(1) if found else "unknown"


@dataclass(frozen=True)
class Kind:
    name: str
    package: str
    binary: Callable[[], str | None]
    version_flag: str
    start: Callable[[ServerSpec], ServerInstance]

    def availability(self) -> Availability:
        binary = self.binary()
        if binary is None:
            return Availability(self.name, None, f"not installed: apt-get install {self.package}")
        return Availability(self.name, _version_of([binary, self.version_flag]))


def _start_builtin(spec: ServerSpec) -> ServerInstance:
    return start_builtin(threads=spec.workers or 2, tls=spec.tls, tls_version=spec.tls_version, cipher=spec.cipher)


def _keepalive(spec: ServerSpec) -> dict[str, object]:
    """The keep-alive and access-log settings every config-file driver takes, defaults left to it."""
    settings: dict[str, object] = {"keepalive": spec.keepalive, "access_log": spec.access_log, "tls": spec.tls}
    if spec.keepalive_timeout_s is not None:
        settings["keepalive_timeout_s"] = spec.keepalive_timeout_s
    if spec.keepalive_requests is not None:
        settings["keepalive_requests"] = spec.keepalive_requests
    return settings


def _start_nginx(spec: ServerSpec) -> ServerInstance:
    return start_nginx(worker_processes=spec.workers or 2, **_keepalive(spec))  # type: ignore[arg-type]


def _start_lighttpd(spec: ServerSpec) -> ServerInstance:
    return start_lighttpd(workers=spec.workers or 1, **_keepalive(spec))  # type: ignore[arg-type]


def _apache(mpm: str) -> Callable[[ServerSpec], ServerInstance]:
    def start(spec: ServerSpec) -> ServerInstance:
        sizes: dict[str, int] = {"processes": spec.workers or 2}
        if spec.threads_per_child is not None:
            sizes["threads_per_child"] = spec.threads_per_child
        return start_apache(mpm=mpm, **sizes, **_keepalive(spec))  # type: ignore[arg-type]

    return start


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("builtin", "gauntlet", lambda: sys.executable, "", _start_builtin),
        Kind("nginx", "nginx", nginx_binary, "-v", _start_nginx),
        Kind("apache-prefork", "apache2", apache_binary, "-v", _apache("prefork")),
        Kind("apache-worker", "apache2", apache_binary, "-v", _apache("worker")),
        Kind("apache-event", "apache2", apache_binary, "-v", _apache("event")),
        Kind("lighttpd", "lighttpd", lighttpd_binary, "-v", _start_lighttpd),
        Kind("h2o", "h2o", h2o_binary, "--version", start_h2o),
        Kind("caddy", "caddy", caddy_binary, "version", start_caddy),
        Kind("tomcat", "tomcat10", tomcat_binary, "version", start_tomcat),
        Kind("yaws", "yaws", yaws_binary, "--version", start_yaws),
    )
}


def kind_of(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise GauntletError(f"'{name}' is not a server kind", f"use one of {', '.join(KINDS)}") from None


def availability(name: str) -> Availability:
    if name == "builtin":
        return Availability(name, __version__)
    return kind_of(name).availability()


def start_server(spec: ServerSpec) -> ServerInstance:
    """Start the server a case names; a kind that is not installed is a one-line error with the fix."""
    found = availability(spec.kind)
    if not found.available:
        raise GauntletError(f"{spec.kind} is {found.reason}", "install it or leave it out of the case")
    return kind_of(spec.kind).start(spec)

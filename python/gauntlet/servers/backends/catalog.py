"""The dynamic backends by name: the page each serves, the programs it needs (with their Debian
packages), its version, and the rules that decide where it can run.

How a server reaches a backend is its *gateway*, declared by each driver for the backends it
supports (`nginx.BACKENDS`, ...): `fastcgi`, `uwsgi` (the uwsgi protocol), `cgi` (the server
forks the page as a program) or `module` (inside the server: mod_php). A CGI backend behind a
`fastcgi` gateway runs through fcgiwrap (nginx cannot fork CGI itself).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from gauntlet.errors import GauntletError
from gauntlet.servers.base import find_binary, program_version, version_in
from gauntlet.workload.pages import HELLO_PHP, HELLO_PHP_CGI, PYTHON_PAGE, PYTHON_PAGE_CGI, Page

Gateway = Literal["fastcgi", "uwsgi", "cgi", "module"]
#: The long-running programs a server talks to; CGI and modules have none. uWSGI speaks the
#: protocol of the gateway in front of it (uwsgi or FastCGI).
Pool = Literal["php-fpm", "uwsgi", "fcgiwrap"]


def _exact(path: str, executable: bool = True) -> Callable[[], str | None]:
    """A program at a fixed path (a CGI page's shebang names it), or a plugin file."""
    return lambda: path if os.path.isfile(path) and os.access(path, os.X_OK if executable else os.R_OK) else None


def _newest(pattern: str) -> Callable[[], str | None]:
    """The highest-versioned file matching `pattern` (php-fpm8.2, libphp8.2.so)."""
    return lambda: max(files_matching(pattern), default=None)


def files_matching(pattern: str) -> list[str]:
    """The regular files matching `pattern`, sorted: a directory or a device (the /dev/null that
    .ci/fresh-machine binds over a program to hide it) is no program."""
    return sorted(path for path in glob.glob(pattern) if os.path.isfile(path))


@dataclass(frozen=True)
class Program:
    find: Callable[[], str | None]
    package: str
    #: How it prints its version (None: the version is in its file name).
    version_flag: str | None = None

    def version(self) -> str:
        path = self.find()
        assert path is not None
        if self.version_flag is None:
            return version_in(os.path.basename(path))
        return program_version([path, self.version_flag])


PHP_FPM = Program(_newest("/usr/sbin/php-fpm*"), "php-fpm", "-v")
MOD_PHP = Program(_newest("/usr/lib/apache2/modules/libphp*.so"), "libapache2-mod-php")
PHP_CGI = Program(_exact("/usr/bin/php-cgi"), "php-cgi", "-v")
UWSGI = Program(lambda: find_binary("uwsgi"), "uwsgi", "--version")
UWSGI_PYTHON = Program(_exact("/usr/lib/uwsgi/plugins/python3_plugin.so", executable=False), "uwsgi-plugin-python3")
PYTHON3 = Program(_exact("/usr/bin/python3"), "python3", "--version")
FCGIWRAP = Program(lambda: find_binary("fcgiwrap"), "fcgiwrap", "-h")


@dataclass(frozen=True)
class Backend:
    name: str
    page: Page
    #: What must be installed; the first program's version is the backend's.
    programs: tuple[Program, ...]
    #: The pool the server talks to; None when the server itself runs the page (CGI, module).
    pool: Pool | None
    #: Why a server that does not list this backend cannot run it (None: Gauntlet's driver does not).
    elsewhere: str | None = None

    @property
    def cgi(self) -> bool:
        return self.page.executable


BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend("php-fpm", HELLO_PHP, (PHP_FPM,), "php-fpm"),
        Backend(
            "mod_php",
            HELLO_PHP,
            (MOD_PHP,),
            None,
            elsewhere="mod_php is an Apache module, and Apache refuses it under a threaded MPM (worker, event): "
            "Debian's PHP is not thread-safe",
        ),
        Backend("php-cgi", HELLO_PHP_CGI, (PHP_CGI,), None),
        Backend("uwsgi", PYTHON_PAGE, (UWSGI, UWSGI_PYTHON), "uwsgi"),
        Backend("python-cgi", PYTHON_PAGE_CGI, (PYTHON3,), None),
        Backend("python-fastcgi", PYTHON_PAGE, (UWSGI, UWSGI_PYTHON), "uwsgi"),
    )
}


def gateways(cgi: Gateway) -> dict[str, Gateway]:
    """The backends of a server that speaks FastCGI and uwsgi: pools over those, and CGI pages
    forked by the server itself (`cgi`) or through fcgiwrap (`fastcgi`)."""
    return {"php-fpm": "fastcgi", "php-cgi": cgi, "uwsgi": "uwsgi", "python-cgi": cgi, "python-fastcgi": "fastcgi"}


def backend_named(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise GauntletError(f"'{name}' is not a backend", f"use one of {', '.join(BACKENDS)}") from None


def unsupported_reason(kind: str, gateways: Mapping[str, Gateway], backend: str) -> str | None:
    """Why `kind` cannot run `backend` (None when it can)."""
    found = backend_named(backend)
    if backend in gateways:
        return None
    if not gateways:
        return f"Gauntlet's {kind} driver serves static files only"
    return found.elsewhere or f"Gauntlet's {kind} driver cannot run {backend}"


def gateway_for(kind: str, gateways: Mapping[str, Gateway], backend: str) -> Gateway:
    reason = unsupported_reason(kind, gateways, backend)
    if reason is not None:
        raise GauntletError(f"{backend} on {kind} is unsupported: {reason}", "pick a supported combination (gauntlet servers)")
    return gateways[backend]


def pool_for(backend: Backend, gateway: Gateway) -> Pool | None:
    return "fcgiwrap" if backend.cgi and gateway == "fastcgi" else backend.pool


def programs_for(backend: Backend, gateway: Gateway) -> tuple[Program, ...]:
    return backend.programs + ((FCGIWRAP,) if pool_for(backend, gateway) == "fcgiwrap" else ())


def missing_packages(backend: Backend, gateway: Gateway) -> list[str]:
    """The Debian packages to install before `backend` can run behind `gateway`."""
    return [program.package for program in programs_for(backend, gateway) if program.find() is None]

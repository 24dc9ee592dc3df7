"""Applications under test, started by the lab inside a server instance behind one of the server's
PHP backends: a real application (WordPress) on a real database (MariaDB), and SPECweb2005's
Banking, Ecommerce and Support (specweb) on BeSim, its back-end simulator.

`APPS` names each application with what it needs installed and the backends it runs on; `app_refusal`
says why a spec's combination cannot work, before anything starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.apps import mariadb
from gauntlet.servers.backends.catalog import Program, files_matching
from gauntlet.servers.base import find_binary
from gauntlet.servers.premises import Premises
from gauntlet.servers.spec import ServerSpec

if TYPE_CHECKING:
    from gauntlet.servers.apps.wordpress import PreparedApp


def _any(pattern: str) -> str | None:
    return next(iter(files_matching(pattern)), None)


@dataclass(frozen=True)
class App:
    name: str
    #: The PHP backends that can run it (the server must support one too).
    backends: tuple[str, ...]
    #: What must be installed: (how to find it, its Debian package).
    programs: tuple[Program, ...]
    #: It also runs as JSP on Tomcat (no backend: Tomcat compiles and runs the pages itself).
    jsp: bool = False

    def missing_packages(self, apcu: bool = False) -> list[str]:
        programs = self.programs + ((APCU,) if apcu else ())
        return list(dict.fromkeys(p.package for p in programs if p.find() is None))


MARIADB_SERVER = Program(mariadb.mariadbd_binary, "mariadb-server")
MARIADB_INSTALL_DB = Program(mariadb.install_db_binary, "mariadb-server")
MARIADB_CLIENT = Program(mariadb.client_binary, "mariadb-client")
WORDPRESS = Program(lambda: "/usr/share/wordpress" if os.path.exists("/usr/share/wordpress/wp-settings.php") else None, "wordpress")
PHP_MYSQL = Program(lambda: _any("/usr/lib/php/*/mysqli.so"), "php-mysql")
PHP_CLI = Program(lambda: find_binary("php"), "php-cli")
APCU = Program(lambda: _any("/usr/lib/php/*/apcu.so"), "php-apcu")

APPS: dict[str, App] = {
    app.name: app
    for app in (
        App(
            "wordpress",
            backends=("php-fpm", "mod_php"),
            programs=(MARIADB_SERVER, MARIADB_INSTALL_DB, MARIADB_CLIENT, WORDPRESS, PHP_MYSQL, PHP_CLI),
        ),
        # Its back end is the engine's own server: nothing to install beyond the backend.
        App("specweb", backends=("php-fpm", "mod_php", "php-cgi"), programs=(), jsp=True),
    )
}

#: The PHP options, and the backends that honour them.
PHP_OPTION_BACKENDS = ("php-fpm", "mod_php")


def app_named(name: str) -> App:
    try:
        return APPS[name]
    except KeyError:
        raise GauntletError(f"'{name}' is not an application", f"use one of {', '.join(APPS)}") from None


def app_refusal(spec: ServerSpec) -> tuple[str, str] | None:
    """(cause, fix) when the spec's application or PHP options cannot work as asked, wherever it runs;
    None when they can. The server's side (does this kind run this backend) and what is installed
    here are the registry's (`check_spec`)."""
    php_options = [name for name, off in (("--no-opcache", not spec.opcache), ("--apcu", spec.apcu)) if off]
    if php_options and spec.backend not in PHP_OPTION_BACKENDS:
        return (
            f"{' and '.join(php_options)} set PHP options, which only php-fpm and mod_php take (backend: {spec.backend})",
            "use --backend php-fpm or mod_php, or leave the PHP options out",
        )
    if spec.app is None:
        if spec.apcu:
            return "--apcu is WordPress's object cache and needs an application", "add --app wordpress"
        return None
    app = app_named(spec.app)
    if spec.php_sessions != "disk" and app.name != "specweb":
        return "php_sessions is the specweb application's session storage", "leave it out, or use --app specweb"
    if spec.kind == "tomcat" and spec.backend is None:
        if not app.jsp:
            return f"{app.name} runs on PHP, and Tomcat runs JSP", "pick a server with a PHP backend (gauntlet servers)"
        return None
    if spec.backend not in app.backends:
        return (
            f"{app.name} runs on PHP ({', '.join(app.backends)}), not on backend {spec.backend}",
            f"use --backend {app.backends[0]} (or {', '.join(app.backends[1:])} where the server runs it)",
        )
    return None


def page_markers(app: str, language: str = "php") -> list[tuple[str, str]]:
    """(path, content marker) of the application's page types (in `language` where it has two),
    its home page first; for specweb, those that need no session."""
    app_named(app)
    if app == "specweb":
        from gauntlet.servers.apps.specweb import PAGES

        return [(page.path(language), page.marker) for page in PAGES if page.workload == "support"]
    from gauntlet.servers.apps.wordpress import pages  # builds the seed on first use

    return [(page.path, page.marker) for page in sorted(pages().values(), key=lambda page: page.name != "home")]


def startup_checks(spec: ServerSpec) -> list[tuple[str, str]]:
    """The pages a start fetches once, each of which must hold its marker (no session needed)."""
    assert spec.app is not None
    return page_markers(spec.app, "jsp" if spec.kind == "tomcat" else "php")


def prepare_app(spec: ServerSpec, premises: Premises, docroot: Path, timeout_s: float) -> PreparedApp:
    """Start the application's back end and put the application in the docroot."""
    if spec.app == "specweb":
        from gauntlet.servers.apps.specweb import prepare_specweb

        return prepare_specweb(spec, premises, docroot, timeout_s)
    from gauntlet.servers.apps.wordpress import prepare_wordpress

    return prepare_wordpress(spec, premises, docroot, timeout_s)


def app_page(app: str, path: str | None) -> tuple[str, str | None]:
    """The path to load on `app` (its home page when none is given) and the content marker its
    responses must hold (None for a path that is not one of the app's page types)."""
    types = page_markers(app)
    chosen = path or types[0][0]
    return chosen, next((marker for page_path, marker in types if page_path == chosen), None)

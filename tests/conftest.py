"""Fixtures that start real servers through the drivers and check that stopping them leaves nothing.

A server that is not installed skips the test with the reason locally, and fails it in CI (CI=true),
where every server is installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.apache import apache_binary, start_apache
from gauntlet.servers.lighttpd import lighttpd_binary, start_lighttpd
from gauntlet.servers.nginx import nginx_binary, start_nginx
from gauntlet.servers.process import leftovers
from gauntlet.servers.caddy import caddy_binary, start_caddy
from gauntlet.servers.h2o import h2o_binary, start_h2o
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.tomcat import start_tomcat, tomcat_binary
from gauntlet.servers.yaws import start_yaws, yaws_binary

IN_CI = os.environ.get("CI") == "true"


def require_installed(kind: str, installed: bool, install_hint: str) -> None:
    if installed:
        return
    reason = f"{kind} is not installed ({install_hint})"
    if IN_CI:
        pytest.fail(f"{reason}; CI installs every server, so .ci/run is missing it")
    pytest.skip(reason)


class Started:
    """Servers a test started, stopped at teardown by pid; teardown fails on any leftover."""

    def __init__(self) -> None:
        self._seen: list[tuple[ServerInstance, set[int]]] = []

    def add(self, instance: ServerInstance) -> ServerInstance:
        self._seen.append((instance, set(instance.pids())))
        return instance

    def stop_all_and_check(self) -> None:
        problems = []
        for instance, pids in self._seen:
            pids |= set(instance.pids())
            instance.stop()
            problems += [f"{instance.kind}: {p}" for p in leftovers(pids, instance.port)]
        assert not problems, "left behind after stop: " + "; ".join(problems)


@pytest.fixture
def builtin_server() -> Iterator[ServerInstance]:
    """The built-in server (2 threads) as its own process."""
    started = Started()
    yield started.add(start_builtin())
    started.stop_all_and_check()


@pytest.fixture
def nginx_server() -> Iterator[Callable[..., ServerInstance]]:
    """A factory: `nginx_server(**params)` starts nginx with the driver's parameters."""
    require_installed("nginx", nginx_binary() is not None, "apt-get install nginx")
    started = Started()

    def start(**params: Any) -> ServerInstance:
        return started.add(start_nginx(**params))

    yield start
    started.stop_all_and_check()


@pytest.fixture
def lighttpd_server() -> Iterator[Callable[..., ServerInstance]]:
    """A factory: `lighttpd_server(**params)` starts lighttpd with the driver's parameters."""
    require_installed("lighttpd", lighttpd_binary() is not None, "apt-get install lighttpd")
    started = Started()

    def start(**params: Any) -> ServerInstance:
        return started.add(start_lighttpd(**params))

    yield start
    started.stop_all_and_check()


@pytest.fixture
def apache_server() -> Iterator[Callable[..., ServerInstance]]:
    """A factory: `apache_server(mpm=..., **params)` starts Apache with that MPM."""
    require_installed("apache2", apache_binary() is not None, "apt-get install apache2")
    started = Started()

    def start(**params: Any) -> ServerInstance:
        return started.add(start_apache(**params))

    yield start
    started.stop_all_and_check()


def spec_server_factory(
    kind: str, start: Callable[..., ServerInstance], binary: Callable[[], str | None], package: str
) -> Iterator[Callable[..., ServerInstance]]:
    """For drivers that take a ServerSpec: `factory(port=..., ready_timeout_s=..., **spec_fields)`."""
    require_installed(kind, binary() is not None, f"apt-get install {package}")
    started = Started()

    def start_with(**params: Any) -> ServerInstance:
        options = {name: params.pop(name) for name in ("port", "ready_timeout_s") if name in params}
        return started.add(start(ServerSpec(kind, **params), **options))

    yield start_with
    started.stop_all_and_check()


@pytest.fixture
def h2o_server() -> Iterator[Callable[..., ServerInstance]]:
    yield from spec_server_factory("h2o", start_h2o, h2o_binary, "h2o")


@pytest.fixture
def caddy_server() -> Iterator[Callable[..., ServerInstance]]:
    yield from spec_server_factory("caddy", start_caddy, caddy_binary, "caddy")


@pytest.fixture
def tomcat_server() -> Iterator[Callable[..., ServerInstance]]:
    yield from spec_server_factory("tomcat", start_tomcat, tomcat_binary, "tomcat10")


@pytest.fixture
def yaws_server() -> Iterator[Callable[..., ServerInstance]]:
    yield from spec_server_factory("yaws", start_yaws, yaws_binary, "yaws")

"""Fixtures that start real servers through the registry and check that stopping them leaves nothing.

A server or backend that is not installed skips the test with the reason locally, and fails it in
CI (CI=true), where every server is installed.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.process import leftovers
from gauntlet.servers.registry import availability, combination, kind_of, start_server
from gauntlet.servers.spec import ServerSpec

IN_CI = os.environ.get("CI") == "true"


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as in a terminal, even when pytest was started in the background by a shell without
    job control, which leaves SIGINT ignored in it and in every process it starts: the Ctrl-C tests
    send SIGINT to the CLI and to this process."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def own_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test runs in a directory of its own: what a command writes by default (results.db,
    report.html) lands there, not in the checkout."""
    monkeypatch.chdir(tmp_path)


def missing_here(reason: str, in_ci: str) -> NoReturn:
    """Skip the test with the reason; in CI, where everything it needs is set up, fail it instead."""
    if IN_CI:
        pytest.fail(f"{reason}; {in_ci}")
    pytest.skip(reason)


def require_installed(kind: str, installed: bool, install_hint: str) -> None:
    if not installed:
        missing_here(f"{kind} is not installed ({install_hint})", "CI installs every server, so .ci/run is missing it")


def require_available(spec: ServerSpec) -> None:
    """Skip (fail in CI) when the spec's server or backend is not installed; a combination the
    server cannot run is left to fail at start, as it would for a user."""
    found = availability(spec.kind)
    require_installed(spec.kind, found.available, (found.reason or "").removeprefix("not installed: "))
    if spec.backend is not None:
        pair = combination(kind_of(spec.kind), spec.backend)
        if pair.supported:
            hint = (pair.reason or "").removeprefix("not installed: ")
            require_installed(f"{spec.backend} on {spec.kind}", pair.available, hint)


def require_app(spec: ServerSpec) -> None:
    """Skip (fail in CI) when the spec's application or its PHP options need packages not installed here."""
    from gauntlet.servers.apps import app_named

    missing = app_named(spec.app).missing_packages(spec.apcu) if spec.app else []
    if missing:
        missing_here(f"{spec.app} needs apt-get install {' '.join(missing)}", "CI installs them, so .ci/run is missing them")


class Started:
    """Servers a test started, stopped at teardown by pid; teardown fails on any leftover:
    a process, a listening port (the server's or its backend's), the cgroup, the work dir."""

    def __init__(self) -> None:
        self._seen: list[tuple[ServerInstance, set[int]]] = []

    def add(self, instance: ServerInstance) -> ServerInstance:
        self._seen.append((instance, set(instance.pids())))
        return instance

    def start(self, spec: ServerSpec, **knobs: Any) -> ServerInstance:
        require_available(spec)
        return self.add(start_server(spec, **knobs))

    def stop_all_and_check(self) -> None:
        problems = []
        for instance, pids in self._seen:
            pids |= set(instance.pids())
            ports = instance.ports
            try:  # one stop that fails must not leave the other servers running
                instance.stop()
            except Exception as exc:
                problems.append(f"{instance.kind}: stop failed: {exc!r}")
            for port in ports:
                problems += [f"{instance.kind}: {p}" for p in leftovers(pids, port)]
            if instance.cgroup is not None and instance.cgroup.path.exists():
                problems.append(f"{instance.kind}: cgroup {instance.cgroup.path} is still there")
            if instance.workdir.exists():
                problems.append(f"{instance.kind}: {instance.workdir} is still there")
        assert not problems, "left behind after stop: " + "; ".join(problems)


Start = Callable[..., ServerInstance]


@pytest.fixture
def server() -> Iterator[Start]:
    """A factory through the registry: `server("nginx", workers=3, access_log=True)` (spec
    fields) or `server(ServerSpec(...), port=..., ready_timeout_s=...)` (test knobs)."""
    started = Started()

    def start(kind_or_spec: str | ServerSpec, *, port: int | None = None, ready_timeout_s: float | None = None,
              **fields: Any) -> ServerInstance:
        spec = kind_or_spec if isinstance(kind_or_spec, ServerSpec) else ServerSpec(kind_or_spec, **fields)
        return started.start(spec, port=port, ready_timeout_s=ready_timeout_s)

    yield start
    started.stop_all_and_check()


@pytest.fixture
def builtin_server() -> Iterator[ServerInstance]:
    """The built-in server (2 threads) as its own process."""
    started = Started()
    yield started.add(start_builtin())
    started.stop_all_and_check()


def kind_factory(server: Start, kind: str) -> Start:
    """`factory(port=..., ready_timeout_s=..., **spec_fields)` for one kind (skips when it is not installed)."""
    require_available(ServerSpec(kind))
    return lambda **fields: server(kind, **fields)


@pytest.fixture
def nginx_server(server: Start) -> Start:
    return kind_factory(server, "nginx")


@pytest.fixture
def h2o_server(server: Start) -> Start:
    return kind_factory(server, "h2o")


@pytest.fixture
def caddy_server(server: Start) -> Start:
    return kind_factory(server, "caddy")


@pytest.fixture
def tomcat_server(server: Start) -> Start:
    return kind_factory(server, "tomcat")


@pytest.fixture
def yaws_server(server: Start) -> Start:
    return kind_factory(server, "yaws")


@pytest.fixture
def node_server(server: Start) -> Start:
    return kind_factory(server, "node")


@pytest.fixture
def inets_server(server: Start) -> Start:
    return kind_factory(server, "inets")


@pytest.fixture
def mochiweb_server(server: Start) -> Start:
    return kind_factory(server, "mochiweb")

"""The Yaws driver against the real Yaws: workload, schedulers, keep-alive limits, the access log
(Gauntlet's logger module) against the engine, HTTPS with pinned versions and suites, nothing left
behind (no epmd), a taken port."""

from __future__ import annotations

from collections.abc import Callable

import psutil
import pytest

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from tests.helpers.server_checks import (
    check_registry_version,
    check_serves_the_workload,
    check_taken_port,
    engine_connections,
    first_field_port,
    idle_close_s,
    requests_before_close,
    thread_names,
    tls_outcomes,
)

Start = Callable[..., ServerInstance]


@pytest.mark.parametrize("tls", [False, True])
def test_serves_the_workload_byte_exact(yaws_server: Start, tls: bool) -> None:
    check_serves_the_workload(yaws_server(tls=tls))


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_are_erlang_schedulers_in_one_process(yaws_server: Start, workers: int) -> None:
    server = yaws_server(workers=workers)
    beam, *helpers = (psutil.Process(pid) for pid in server.pids())
    assert [p.name() for p in helpers] == ["erl_child_setup"], "no epmd, no other OS process"
    schedulers = sorted(name for name in thread_names(beam.pid) if name.endswith("_scheduler"))
    assert schedulers == [f"{n}_scheduler" for n in range(1, workers + 1)]


def test_keep_alive_limits_and_idle_timeout(yaws_server: Start) -> None:
    server = yaws_server(keepalive_requests=3, keepalive_timeout_s=1)
    assert requests_before_close(server) == 3
    closed_after_s = idle_close_s(server, wait_s=4)
    assert closed_after_s is not None and 0.5 <= closed_after_s <= 3.0
    assert requests_before_close(yaws_server(keepalive=False)) == 1


@pytest.mark.parametrize(("keepalive", "connections"), [(True, 4), (False, 300)])
def test_engine_connections_equal_the_access_log(yaws_server: Start, keepalive: bool, connections: int) -> None:
    server = yaws_server(access_log=True, keepalive=keepalive, keepalive_requests=0)
    assert engine_connections(server, first_field_port) == connections


def test_https_access_log_and_engine_agree(yaws_server: Start) -> None:
    server = yaws_server(tls=True, access_log=True, keepalive=False)
    assert engine_connections(server, first_field_port, requests=200) == 200


@pytest.mark.parametrize(
    ("pins", "accepted"),
    [
        ({"tls_version": "1.2"}, [0, 0, 0, 3, 3, 3]),
        ({"cipher": "TLS_AES_256_GCM_SHA384"}, [3, 0, 3, 0, 0, 0]),
        ({"cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, [0, 0, 0, 3, 3, 0]),
    ],
)
def test_tls_version_and_cipher_are_pinned(yaws_server: Start, pins: dict, accepted: list[int]) -> None:
    server = yaws_server(tls=True, **pins)
    assert tls_outcomes(server) == accepted


def test_dynamic_backends_are_refused(yaws_server: Start) -> None:
    with pytest.raises(GauntletError, match="static files only"):
        yaws_server(backend="php-fpm")


def test_a_taken_port_is_one_line_with_the_log(yaws_server: Start) -> None:
    check_taken_port(yaws_server, "eaddrinuse")


def test_the_registry_reports_the_installed_version(yaws_server: Start) -> None:
    check_registry_version("yaws", "yaws")

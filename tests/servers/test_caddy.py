"""The Caddy driver against the real Caddy: workload, GOMAXPROCS, keep-alive on and off, the JSON
access log against the engine, HTTPS with pinned versions and suites, refused settings, a taken
port."""

from __future__ import annotations

import json
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
    idle_close_s,
    requests_before_close,
    tls_outcomes,
)

Start = Callable[..., ServerInstance]


def client_port(line: str) -> int:
    return int(json.loads(line)["request"]["remote_port"])


@pytest.mark.parametrize("tls", [False, True])
def test_serves_the_workload_byte_exact(caddy_server: Start, tls: bool) -> None:
    check_serves_the_workload(caddy_server(tls=tls))


def test_one_process_whose_go_runtime_gets_the_workers(caddy_server: Start) -> None:
    server = caddy_server(workers=1)
    (pid,) = server.pids()
    assert psutil.Process(pid).environ()["GOMAXPROCS"] == "1"
    assert "GOMAXPROCS" not in psutil.Process(caddy_server().pids()[0]).environ()


def test_keep_alive_on_with_an_idle_timeout_and_off(caddy_server: Start) -> None:
    kept = caddy_server(keepalive_timeout_s=1)
    assert requests_before_close(kept) == 5
    closed_after_s = idle_close_s(kept, wait_s=4)
    assert closed_after_s is not None and 0.5 <= closed_after_s <= 3.0
    assert requests_before_close(caddy_server(keepalive=False)) == 1


@pytest.mark.parametrize(("keepalive", "connections"), [(True, 4), (False, 300)])
def test_engine_connections_equal_the_access_log(caddy_server: Start, keepalive: bool, connections: int) -> None:
    server = caddy_server(access_log=True, keepalive=keepalive)
    assert engine_connections(server, client_port) == connections


def test_https_access_log_and_engine_agree(caddy_server: Start) -> None:
    server = caddy_server(tls=True, access_log=True, keepalive=False)
    assert engine_connections(server, client_port, requests=200) == 200


@pytest.mark.parametrize(
    ("pins", "accepted"),
    [
        ({"tls_version": "1.2"}, [0, 0, 0, 3, 3, 3]),
        ({"tls_version": "1.3"}, [3, 3, 3, 0, 0, 0]),
        ({"cipher": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}, [0, 0, 0, 3, 0, 3]),
    ],
)
def test_tls_version_and_cipher_are_pinned(caddy_server: Start, pins: dict, accepted: list[int]) -> None:
    server = caddy_server(tls=True, **pins)
    assert tls_outcomes(server) == accepted


@pytest.mark.parametrize(
    ("fields", "refused"),
    [
        ({"keepalive_requests": 100}, "keepalive_requests"),
        ({"tls": True, "cipher": "TLS_AES_128_GCM_SHA256"}, "TLS 1.3 suite itself"),
        ({"backend": "uwsgi"}, "uwsgi"),
        ({"workers": 0}, "1 or more"),
    ],
)
def test_what_caddy_cannot_do_is_refused_before_it_starts(caddy_server: Start, fields: dict, refused: str) -> None:
    with pytest.raises(GauntletError, match=refused):
        caddy_server(**fields)


def test_a_taken_port_is_one_line_with_the_log(caddy_server: Start) -> None:
    check_taken_port(caddy_server, "address already in use", ready_timeout_s=3)


def test_the_registry_reports_the_installed_version(caddy_server: Start) -> None:
    check_registry_version("caddy", "caddy")

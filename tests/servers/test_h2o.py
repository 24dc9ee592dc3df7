"""The h2o driver against the real h2o, beyond what every kind meets (test_contract.py,
test_tls.py): event-loop threads and their user, idle close, the access log against the engine
when the client closes, over HTTPS too, and the settings h2o refuses."""

from __future__ import annotations

import os

import psutil
import pytest

from gauntlet.errors import GauntletError
from tests.conftest import Start
from tests.helpers.server_checks import (
    check_closes_idle_connections,
    engine_connections,
    first_field_port,
    requests_before_close,
)


@pytest.mark.parametrize("workers", [1, 3])
def test_workers_are_event_loop_threads(h2o_server: Start, workers: int) -> None:
    server = h2o_server(workers=workers)
    main = psutil.Process(server.pids()[0])
    assert main.num_threads() == workers + 1, "num-threads event loops and the main thread"
    assert f"num-threads: {workers}\n" in server.config_text
    expected_user = "nobody" if os.geteuid() == 0 else psutil.Process().username()
    assert main.username() == expected_user


def test_keeps_connections_open_and_closes_idle_ones(h2o_server: Start) -> None:
    server = h2o_server(keepalive_timeout_s=1)
    assert requests_before_close(server) == 5
    check_closes_idle_connections(server)


def test_engine_connections_equal_the_access_log(h2o_server: Start) -> None:
    server = h2o_server(access_log=True)
    assert engine_connections(server, first_field_port) == 4
    assert engine_connections(server, first_field_port, keepalive=False) == 300, "h2o closes when the client asks"


def test_https_access_log_and_engine_agree(h2o_server: Start) -> None:
    server = h2o_server(tls=True, access_log=True)
    assert engine_connections(server, first_field_port, requests=200, keepalive=False) == 200


@pytest.mark.parametrize(
    ("fields", "refused"),
    [
        ({"keepalive": False}, "keep-alive off"),
        ({"keepalive_requests": 100}, "keepalive_requests"),
        ({"backend": "uwsgi"}, "uwsgi"),
        ({"cipher": "TLS_AES_128_GCM_SHA256"}, "plain HTTP"),
        ({"tls": True, "cipher": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, "ECDSA certificate"),
        ({"tls": True, "tls_version": "1.2", "cipher": "TLS_AES_128_GCM_SHA256"}, "TLS 1.3 suite"),
    ],
)
def test_what_h2o_cannot_do_is_refused_before_it_starts(h2o_server: Start, fields: dict, refused: str) -> None:
    with pytest.raises(GauntletError, match=refused):
        h2o_server(**fields)

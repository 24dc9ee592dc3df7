"""The Caddy driver against the real Caddy, beyond what every kind meets (test_contract.py,
test_tls.py): GOMAXPROCS, keep-alive limits on a raw connection, the JSON access log against the
engine over HTTPS, and the settings Caddy refuses."""

from __future__ import annotations

import psutil
import pytest

from gauntlet.errors import GauntletError
from tests.conftest import Start
from tests.helpers.server_checks import (
    check_closes_idle_connections,
    engine_connections,
    json_log_port,
    requests_before_close,
)


def test_one_process_whose_go_runtime_gets_the_workers(caddy_server: Start) -> None:
    server = caddy_server(workers=1)
    (pid,) = server.pids()
    assert psutil.Process(pid).environ()["GOMAXPROCS"] == "1"
    assert "GOMAXPROCS" not in psutil.Process(caddy_server().pids()[0]).environ()


def test_keep_alive_on_with_an_idle_timeout_and_off(caddy_server: Start) -> None:
    kept = caddy_server(keepalive_timeout_s=1)
    assert requests_before_close(kept) == 5
    check_closes_idle_connections(kept)
    assert requests_before_close(caddy_server(keepalive=False)) == 1


def test_https_access_log_and_engine_agree(caddy_server: Start) -> None:
    server = caddy_server(tls=True, access_log=True, keepalive=False)
    assert engine_connections(server, json_log_port, requests=200) == 200


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

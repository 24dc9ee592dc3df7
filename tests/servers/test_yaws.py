"""The Yaws driver against the real Yaws, beyond what every kind meets (test_contract.py,
test_tls.py): schedulers and no epmd, keep-alive limits, the access log (Gauntlet's logger module)
against the engine over HTTPS."""

from __future__ import annotations


import psutil
import pytest

from tests.conftest import Start
from tests.helpers.server_checks import (
    check_closes_idle_connections,
    engine_connections,
    first_field_port,
    requests_before_close,
    thread_names,
)


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
    check_closes_idle_connections(server)
    assert requests_before_close(yaws_server(keepalive=False)) == 1


def test_https_access_log_and_engine_agree(yaws_server: Start) -> None:
    server = yaws_server(tls=True, access_log=True, keepalive=False)
    assert engine_connections(server, first_field_port, requests=200) == 200

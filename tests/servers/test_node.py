"""The Node.js driver against the real Node, beyond what every kind meets (test_contract.py,
test_tls.py): the cluster's workers, keep-alive limits, the access log over HTTPS."""

from __future__ import annotations

import psutil

from tests.conftest import Start
from tests.helpers.server_checks import (
    check_closes_idle_connections,
    engine_connections,
    first_field_port,
    requests_before_close,
)


def test_workers_are_cluster_processes_sharing_the_load(node_server: Start) -> None:
    server = node_server(workers=2, access_log=True)
    primary, *workers = (psutil.Process(pid) for pid in server.pids())
    assert [p.ppid() for p in workers] == [primary.pid] * 2
    before = [cpu_s(p) for p in workers]
    assert engine_connections(server, first_field_port, requests=2000) == 4
    used = [cpu_s(p) - was for p, was in zip(workers, before, strict=True)]
    assert all(s > 0 for s in used), f"the primary hands connections to both workers: {used}"


def cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def test_keep_alive_limits_and_idle_timeout(node_server: Start) -> None:
    server = node_server(keepalive_requests=3, keepalive_timeout_s=1)
    assert requests_before_close(server) == 3
    check_closes_idle_connections(server)


def test_https_without_keep_alive_logs_a_connection_per_request(node_server: Start) -> None:
    server = node_server(tls=True, access_log=True, keepalive=False)
    assert engine_connections(server, first_field_port, requests=100) == 100

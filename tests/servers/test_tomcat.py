"""The Tomcat driver against Debian's Tomcat 10, beyond what every kind meets (test_contract.py,
test_tls.py): request threads, keep-alive limits, the access log against the engine over HTTPS.
Each start costs a JVM (several seconds on 2 cores), so each test checks all it can on one
instance."""

from __future__ import annotations

import psutil
import pytest

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.registry import start_server
from gauntlet.servers.spec import ServerSpec
from tests.conftest import Start
from tests.helpers.server_checks import (
    check_serves_the_workload,
    check_closes_idle_connections,
    engine_connections,
    first_field_port,
    requests_before_close,
    thread_names,
)


def request_threads(server: ServerInstance) -> list[str]:
    """Names of the JVM's request threads (the Executor's, `worker-N`)."""
    (pid,) = server.pids()
    return sorted(name for name in thread_names(pid) if name.startswith("worker-"))


def test_workload_threads_keep_alive_limits_heap_and_access_log(tomcat_server: Start) -> None:
    server = tomcat_server(workers=3, keepalive_requests=3, keepalive_timeout_s=1, access_log=True, java_heap_mb=384)
    check_serves_the_workload(server)
    (pid,) = server.pids()
    assert "-Xmx384m" in psutil.Process(pid).cmdline()
    assert request_threads(server) == ["worker-1", "worker-2", "worker-3"]
    assert requests_before_close(server) == 3
    check_closes_idle_connections(server)
    # 300 requests at 3 per connection; the last connections of the run may carry fewer.
    assert 100 <= engine_connections(server, first_field_port) <= 103


def test_keep_alive_off(tomcat_server: Start) -> None:
    server = tomcat_server(keepalive=False, access_log=True)
    assert 'maxKeepAliveRequests="1"' in server.config_text
    assert requests_before_close(server) == 1
    assert engine_connections(server, first_field_port) == 300


def test_https_access_log_and_engine_agree(tomcat_server: Start) -> None:
    server = tomcat_server(tls=True, access_log=True)
    assert engine_connections(server, first_field_port, requests=100, keepalive=False) == 100


def test_a_heap_on_another_kind_is_refused_before_the_start() -> None:
    with pytest.raises(GauntletError, match="nginx does not support java_heap_mb: it is Tomcat's JVM heap"):
        start_server(ServerSpec("nginx", java_heap_mb=512))

"""Every supported server and backend combination of the registry's table, against the real
programs: the dynamic page's exact body over HTTP and HTTPS, the backend pool's processes,
keep-alive on and off counted in the server's access log, the pool in the monitor's processes as
`backend`; and every combination the table rules out is a one-line `unsupported` error.

The HTTP test reaches the pool over a unix socket, the HTTPS one over loopback TCP, so both
socket kinds are covered without starting each combination four times.
"""

from __future__ import annotations

import urllib.request

import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.monitor.sampler import Sampler
from gauntlet.servers.backends.catalog import backend_named
from gauntlet.servers.process import processes_under, unverified_tls
from gauntlet.servers.registry import combinations, kind_of
from tests.conftest import Start
from tests.helpers.logs import access_log_lines
from tests.helpers.server_checks import first_field_port, json_log_port

SUPPORTED = [(c.kind, c.backend) for c in combinations() if c.supported]
UNSUPPORTED = [(c.kind, c.backend) for c in combinations() if not c.supported]
POOL_WORKERS = 3
REQUESTS = 120
CONNECTIONS = 4
#: Children of the server's own that run another program, counted with the backends by the
#: monitor: h2o's crash handler (perl).
SERVER_HELPERS = {"h2o": 1}


def fetch(url: str, tls: bool) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10, context=unverified_tls() if tls else None) as response:
        return response.status, response.read()


def load(url: str, requests: int, keepalive: bool = True) -> dict:
    plan = {"url": url, "connections": CONNECTIONS, "threads": 2, "requests": requests, "keepalive": keepalive}
    result = engine.run(plan).result
    assert (result["responses"], result["errors_total"]) == (requests, 0), result["errors"]
    assert result["status_codes"] == {"200": requests}
    return result


def logged_connections(instance, requests: int, before: int = 0) -> int:
    """Distinct connections among the `requests` lines logged after the first `before`. Apache's
    own "OPTIONS *" requests (its internal dummy connection, which wakes idle prefork children) are
    not the client's, and land among the load's lines when the pool changes size."""
    lines = [line for line in access_log_lines(instance, before + requests)[before:] if '"OPTIONS * ' not in line]
    client_port = json_log_port if instance.kind == "caddy" else first_field_port
    return len({client_port(line) for line in lines[-requests:]})


@pytest.mark.parametrize(("kind", "backend"), SUPPORTED, ids=[f"{k}+{b}" for k, b in SUPPORTED])
def test_page_over_http_with_keep_alive(server: Start, kind: str, backend: str) -> None:
    page = backend_named(backend).page
    instance = server(kind, backend=backend, backend_workers=POOL_WORKERS, access_log=True, keepalive_requests=0)
    assert instance.backend_version
    assert fetch(f"{instance.url}{page.name}", tls=False) == (200, page.expected_body())
    assert fetch(f"{instance.url}webtest.html", tls=False)[0] == 200, "static files still served"
    for pool in instance.backends:
        assert len(processes_under(pool.proc.pid)) == 1 + POOL_WORKERS, f"{pool.name}: master + backend_workers"
    before = len(instance.access_log_lines())  # h2o writes its log behind the responses
    with Sampler.of(instance, interval_s=0.1) as sampler:
        result = load(f"{instance.url}{page.name}", REQUESTS)
    assert result["bytes_in"] > REQUESTS * len(page.expected_body())
    # Connections reused: the server saw the client's few connections (once, under heavy load, a
    # prefork Apache closed one of them early and the client opened a fifth).
    assert logged_connections(instance, REQUESTS, before) == result["connections_opened"] <= CONNECTIONS + 2
    totals = sampler.totals()
    assert totals.cpu_s > 0
    if instance.backends:
        assert totals.memory["backend"].processes == 1 + POOL_WORKERS + SERVER_HELPERS.get(kind, 0)


@pytest.mark.parametrize(("kind", "backend"), SUPPORTED, ids=[f"{k}+{b}" for k, b in SUPPORTED])
def test_page_over_https_without_keep_alive(server: Start, kind: str, backend: str) -> None:
    page = backend_named(backend).page
    # The server closes each connection; one that cannot be told to (h2o) closes when the client asks.
    switch = kind_of(kind).keepalive_switch
    instance = server(kind, backend=backend, backend_socket="tcp", tls=True, keepalive=not switch, access_log=True)
    assert fetch(f"{instance.url}{page.name}", tls=True) == (200, page.expected_body())
    requests = REQUESTS // 2
    before = len(instance.access_log_lines())
    result = load(f"{instance.url}{page.name}", requests, keepalive=switch)
    assert result["tls"]["handshakes"] == requests
    assert logged_connections(instance, requests, before) == requests
    assert all(pool.port for pool in instance.backends) and len(instance.ports) == 1 + len(instance.backends)


@pytest.mark.parametrize(("kind", "backend"), UNSUPPORTED, ids=[f"{k}+{b}" for k, b in UNSUPPORTED])
def test_unsupported_is_a_one_line_error(server: Start, kind: str, backend: str) -> None:
    with pytest.raises(GauntletError) as raised:
        server(kind, backend=backend)
    message = str(raised.value)
    assert "\n" not in message and f"{backend} on {kind} is unsupported: " in message


def test_uwsgi_runs_the_configured_threads(server: Start) -> None:
    instance = server("nginx", backend="uwsgi", backend_workers=2, backend_threads=3)
    _master, *workers = processes_under(instance.backend_pids()[0])
    assert len(workers) == 2 and all(worker.num_threads() >= 3 for worker in workers)
    load(f"{instance.url}page.py", 60)

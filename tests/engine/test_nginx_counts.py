"""The engine against a real nginx: what the engine counts equals what nginx logged.

Each access-log line is one request, with the connection's serial number, so the log also says how
many TCP connections nginx accepted for each mode.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gauntlet import engine
from gauntlet.servers.base import ServerInstance
from tests.helpers.logs import log_lines


def logged(server: ServerInstance, expected: int) -> tuple[int, int]:
    """(requests, distinct connections) in nginx's access log, once it has `expected` lines."""
    lines = log_lines(server.workdir / "logs" / "access.log", expected)
    return len(lines), len({line.split()[0] for line in lines})


CONNECTIONS = 8


def plan(url: str, **fields: object) -> engine.Plan:
    return {"url": url, "connections": CONNECTIONS, "threads": 2, **fields}


@pytest.mark.parametrize(
    ("mode", "fields", "connections"),
    [
        ("keep-alive", {"requests": 3000}, range(8, 9)),
        ("no keep-alive", {"requests": 600, "keepalive": False}, range(600, 601)),
        ("10 calls per connection", {"requests": 1000, "calls_per_connection": 10}, range(100, 109)),
        ("HTTP/1.0 keep-alive", {"requests": 500, "http_version": "1.0"}, range(8, 9)),
        # One thread: its 8 requests in flight are enough for the window to nap (6 or more).
        ("keep-alive, batch window", {"requests": 3000, "threads": 1, "io_batch_us": 500}, range(8, 9)),
    ],
)
def test_engine_counts_equal_the_access_log(
    nginx_server: Callable[..., ServerInstance], mode: str, fields: dict[str, object], connections: range
) -> None:
    server = nginx_server(workers=2, access_log=True, keepalive_requests=100_000)
    result = engine.run(plan(f"{server.url}webtest.html", **fields)).result
    requests = fields["requests"]
    assert (result["requests"], result["responses"], result["errors_total"]) == (requests, requests, 0), mode
    logged_requests, logged_connections = logged(server, requests)
    assert logged_requests == requests, mode
    assert logged_connections in connections, f"{mode}: nginx saw {logged_connections} connections"
    assert result["connections_opened"] == logged_connections, mode


def test_a_duration_run_abandons_at_most_one_request_per_connection(nginx_server: Callable[..., ServerInstance]) -> None:
    server = nginx_server(workers=2, access_log=True, keepalive_requests=100_000)
    # No warm-up: the log then holds the measured requests and the ones the end of the run cut off.
    result = engine.run(plan(f"{server.url}webtest.html", duration_us=1_000_000)).result
    assert result["stop_reason"] == "duration" and result["elapsed_us"] == 1_000_000
    assert result["responses"] > 0
    # Wait for as many lines as could be there; an abandoned request is logged once nginx sees the close.
    logged_requests, _ = logged(server, result["responses"] + CONNECTIONS)
    assert 0 <= logged_requests - result["responses"] <= CONNECTIONS

"""Real cases for the store and report tests: short engine runs against the built-in server,
measured and recorded by the suite's own `lab.case.measure` (the server's processes monitored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gauntlet import __version__
from gauntlet.cli.load_options import LoadOptions
from gauntlet.lab.case import measure
from gauntlet.lab.suite import qos_summary
from gauntlet.model import loadfile
from gauntlet.model.record import CaseRecord
from gauntlet.servers.base import ServerInstance

MEASURE_S = 0.3


def load_case(
    server: ServerInstance, params: dict[str, Any], *, repeat: int = 0, query: str = "", measure_s: float = MEASURE_S,
    requests: int | None = None, client: dict[str, Any] | None = None,
) -> CaseRecord:
    """One case of the closed loop (or of a constant rate with `rate_per_s`): `params` name the
    path, connections, keep-alive, timeout (`timeout_s`); `query` adds an injected fault
    (?delay_ms=5) the key does not show; `client` pins LoadOptions' client settings (`io_batch_us`,
    `scheduling`: settings the key shows).
    `requests`, when given, ends it instead of `measure_s`: a view that needs so many responses
    gets them however slow the machine is."""
    url = f"{server.url.rstrip('/')}{params.get('path', '/webtest.html')}{query}"
    options = LoadOptions(
        connections=params.get("connections", 4), threads=2, requests=requests,
        duration_us=None if requests else round(measure_s * 1e6),
        no_keepalive=not params.get("keepalive", True), rate_per_s=params.get("rate_per_s"),
        timeout_us=round(params["timeout_s"] * 1e6) if "timeout_s" in params else None, **(client or {}),
    )
    params = {"server": "builtin", "protocol": server.scheme, **params}
    return measure(options.plan(url), server, params, server_version=__version__, repeat=repeat).record


SLOW_PAGE_LOAD = """\
sessions:
  - name: wait
    pages: [{name: slow, path: '/hello?delay_per_connection_ms=10'}]
users: 1
warm_up: 200ms
measure: 1s
qos: {good: 200ms, tolerable: 10s}
"""


def sessions_case(server: ServerInstance, load_path: Path, users: int, params: dict[str, Any]) -> CaseRecord:
    """Sessions of the load file at `users`, with the QoS verdict the suite stores beside them; with
    SLOW_PAGE_LOAD, pages take about 10 ms per user, so a few users are QoS-valid and 20 or more are
    not."""
    load = loadfile.load(load_path).with_users(users)
    params = {"server": "builtin", "protocol": server.scheme, "model": "sessions", "users": users, **params}
    record = measure(load.to_plan(server.url), server, params, server_version=__version__).record
    assert record.result is not None, record.error
    record.result["qos"] = qos_summary(load, record.result)
    return record

"""A suite's grids as an ordered list of cases, in blocks that share one server instance, so that
each server configuration starts once (per restart) however many groups use it."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gauntlet import engine
from gauntlet.analysis import capacity
from gauntlet.model import loadfile
from gauntlet.model.case import Case, Sessions, plan_params, server_params
from gauntlet.plan import IdlePlan, Plan, WeightedPath
from gauntlet.servers.registry import server_keepalive
from gauntlet.servers.sizing import for_connections
from gauntlet.servers.spec import ServerSpec
from gauntlet.suite.model import WORKLOADS, Defaults, Group, ServerEntry, Suite


@dataclass(frozen=True)
class Block:
    """Cases on one server configuration, in the order they run."""

    server: ServerSpec
    cases: tuple[Case, ...]


def _product(axes: dict[str, list[Any] | None]) -> Iterable[dict[str, Any]]:
    """Every combination of the axes that are given (None: not an axis of this group)."""
    given = {name: values for name, values in axes.items() if values is not None}
    for values in itertools.product(*given.values()):
        yield dict(zip(given, values, strict=True))


def server_specs(entry: ServerEntry, group: Group) -> Iterable[tuple[ServerSpec, bool, str]]:
    """Each server configuration of the group's grid, with the case's keep-alive (the client's) and
    HTTP version: a server serves HTTP/2 only in the cases that speak it."""
    axes = {
        "workers": group.workers,
        "keepalive": group.keepalive,
        "protocol": group.protocol,
        "http_version": group.http_version,
        "backend": group.backend,
        "backend_socket": group.backend_socket,
        "backend_workers": group.backend_workers,
        "opcache": group.opcache,
        "php_sessions": group.php_sessions,
        "scheduler_busy_wait": group.scheduler_busy_wait,
    }
    for point in _product(axes):
        protocol, keepalive, http_version = point.pop("protocol"), point.pop("keepalive"), point.pop("http_version")
        settings = entry.model_dump(exclude_none=True) | point
        spec = ServerSpec(
            **settings, keepalive=server_keepalive(entry.kind, keepalive), tls=protocol == "https",
            also_https=protocol == "http+https", http2=http_version == "2",
        )
        yield spec, keepalive, http_version


def _pages(group: Group) -> list[tuple[str | None, str]]:
    """(workload id or None, path) pairs."""
    if group.workload is not None:
        return [(workload, WORKLOADS[workload]) for workload in group.workload]
    return [(None, path) for path in group.path or ["/"]]


def _load_plan(group: Group, defaults: Defaults, point: dict[str, Any], keepalive: bool, workload: str | None) -> Plan:
    """The case's engine plan, without its URL (the server's is known once it runs)."""
    bounded_by_group = group.requests is not None or group.duration is not None
    requests = group.requests if bounded_by_group else defaults.requests
    duration_us = group.duration if bounded_by_group else defaults.duration
    idle = point.get("idle")
    return Plan(
        url="",
        connections=point.get("connections", defaults.connections),
        threads=group.threads or defaults.threads,
        requests=requests,
        duration_us=duration_us if requests is None else None,
        warmup_us=group.warmup if group.warmup is not None else defaults.warmup,
        timeout_us=group.timeout if group.timeout is not None else defaults.timeout,
        io_batch_us=defaults.io_batch,
        keepalive=keepalive,
        http_version=point["http_version"],
        streams_per_connection=point.get("streams"),
        calls_per_connection=point.get("calls_per_connection"),
        rate_per_s=point.get("rate_per_s"),
        paths=[WeightedPath(**path) for path in engine.tree_mix()] if workload == "tree" else None,
        idle=IdlePlan(connections=idle, send_interval_us=group.idle_send_interval) if idle else None,
    )


def group_cases(group: Group, entry: ServerEntry, defaults: Defaults, suite_dir: Path) -> Iterable[Case]:
    for spec, keepalive, http_version in server_specs(entry, group):
        base = {"group": group.name, **server_params(spec, keepalive)}
        if group.model == "sessions":
            yield from _session_cases(group, spec, base | _version_param(http_version), suite_dir)
            continue
        load_axes = {
            "connections": group.connections,
            "rate_per_s": group.rate_per_s,
            "calls_per_connection": group.calls_per_connection,
            "http_version": [http_version],
            "streams": group.streams if http_version == "2" else None,
            "idle": group.idle,
        }
        for workload, path in _pages(group):
            page = {"path": path} | ({"workload": workload} if workload else {})
            for point in _product(load_axes):
                plan = _load_plan(group, defaults, point, keepalive, workload)
                yield Case(group.name, spec, path, base | page | plan_params(plan, group.model), plan)


def _version_param(http_version: str) -> dict[str, Any]:
    """The HTTP version in a case's params, as plan_params names it: only when not 1.1."""
    return {} if http_version == "1.1" else {"http_version": http_version}


def _session_cases(group: Group, spec: ServerSpec, base: dict[str, Any], suite_dir: Path) -> Iterable[Case]:
    assert group.load is not None
    load = loadfile.load(loadfile.find(group.load, suite_dir), group.load_overrides)
    first_page = load.sessions[0].pages[0].path
    params = base | {"model": "sessions", "load": group.load}
    if load.think_scale != 1:
        params["think_scale"] = load.think_scale
    if load.phases is not None:
        params["phases"] = load.phases_text()
    if group.capacity is not None:
        sessions = Sessions(load, None, group.capacity.start, group.capacity.max_probes, group.capacity.warm_up)
        yield Case(group.name, spec, first_page, params | {"capacity": True}, sessions=sessions)
        return
    if group.users is None:
        yield Case(group.name, spec, first_page, params, sessions=Sessions(load))
        return
    for users in group.users:
        yield Case(group.name, spec, first_page, params | {"users": users}, sessions=Sessions(load, users))


def expand(suite: Suite, kinds: list[str], suite_dir: Path) -> list[Block]:
    """The suite's cases on the given server kinds, grouped into blocks by server configuration;
    blocks follow the suite's server order, cases within a block the file's order."""
    blocks: dict[ServerSpec, list[Case]] = {}
    for entry in suite.servers:
        if entry.kind not in kinds:
            continue
        for group in suite.groups:
            if group.servers is not None and entry.kind not in group.servers:
                continue
            for case in group_cases(group, entry, suite.defaults, suite_dir):
                blocks.setdefault(case.server, []).append(case)
    return [
        Block(for_connections(spec, max(most_connections(c) for c in cases)), tuple(cases)) for spec, cases in blocks.items()
    ]


def most_connections(case: Case) -> int:
    """The most connections the case opens at once; for a capacity search, at the highest level its
    probes can reach (its ceiling)."""
    if case.plan is not None:
        return case.plan.all_connections()
    assert case.sessions is not None
    sessions = case.sessions
    if sessions.capacity_start is None:
        return sessions.plan(case.params, "").all_connections()
    return capacity.most_connections(sessions.load)

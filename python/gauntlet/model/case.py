"""A grid point of a suite, as the expansion hands it to the runner: the server it needs, the
request path, and the load (an engine plan without its URL, or sessions from a load file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gauntlet.plan import Plan
from gauntlet.servers.spec import ServerSpec

if TYPE_CHECKING:
    from gauntlet.model.loadfile import LoadFile


@dataclass(frozen=True)
class Sessions:
    """A sessions case: the load file, and a number of simultaneous users, or a capacity search
    (from `capacity_start`), or neither: the load file as written (its users or arrival phases)."""

    load: LoadFile
    users: int | None = None
    capacity_start: int | None = None
    capacity_max_probes: int = 8
    #: A run at the start level before a search's first probe on a freshly started server, so that
    #: compilation and JIT happen before measuring (0: none).
    capacity_warm_up_us: int = 0

    def plan(self, params: dict[str, Any], url: str, https_url: str | None = None) -> Plan:
        """The engine plan of the case (or capacity probe) with these params (its level, its HTTP
        version); `https_url`: where its `scheme: https` pages go, when not to `url`."""
        level = params.get(self.load.level_name)
        plan = (self.load if level is None else self.load.at_level(level)).to_plan(url, https_url)
        return plan.model_copy(update={"http_version": params["http_version"]}) if "http_version" in params else plan


@dataclass(frozen=True)
class Case:
    """A grid point: the server it needs, the request path, and the load: an engine plan without its
    URL, or sessions whose plan the load file builds at the target."""

    group: str
    server: ServerSpec
    path: str
    params: dict[str, Any]
    plan: Plan | None = None
    sessions: Sessions | None = None


def server_params(spec: ServerSpec, keepalive: bool) -> dict[str, Any]:
    """The server's part of a case's params, in the store's words; `keepalive` is the case's (the
    client's), which a server without a switch for it does not show in its spec."""
    params = {("server" if name == "kind" else name): value for name, value in spec.params().items()}
    also_https = params.pop("also_https", False)
    params["protocol"] = "https" if params.pop("tls", False) else ("http+https" if also_https else "http")
    params.pop("http2", None)  # the load's http_version says it
    params["keepalive"] = keepalive
    return params


def plan_params(plan: Plan, model: str) -> dict[str, Any]:
    """The load's part of a case's params, in the store's words, under the plan's names."""
    params: dict[str, Any] = {"model": model, "connections": plan.connections}
    for name in ("rate_per_s", "calls_per_connection", "requests"):
        if getattr(plan, name) is not None:
            params[name] = getattr(plan, name)
    if plan.duration_us is not None:
        params["duration_s"] = plan.duration_us / 1e6
    # Settings that change what is measured (a request that times out at 1 s succeeds at 15 s): part
    # of the case's identity, so that `compare` and `--resume` never take one for the other.
    if plan.timeout_us is not None:
        params["timeout_s"] = plan.timeout_us / 1e6
    if plan.warmup_us is not None:
        params["warmup_s"] = plan.warmup_us / 1e6
    if plan.io_batch_us is not None:
        params["io_batch_us"] = plan.io_batch_us
    if plan.scheduling is not None:
        params["scheduling"] = plan.scheduling
    if plan.http_version not in (None, "1.1"):
        params["http_version"] = plan.http_version
    # HTTP/2's streams, 1 when not given, so that `--http2` and `--http2 --streams 1` are one case
    # (sessions carry theirs as 2 streams a connection, always).
    if plan.http_version == "2" and plan.sessions is None:
        params["streams"] = plan.streams_per_connection or 1
    if plan.idle is not None:
        params["idle"] = plan.idle.connections
        if plan.idle.send_interval_us is not None:
            params["idle_send_interval_s"] = plan.idle.send_interval_us / 1e6
    return params

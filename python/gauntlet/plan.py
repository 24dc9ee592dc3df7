"""The engine's plan as a typed model (engine/src/plan.rs and the types it holds): every command,
the suite expansion, load files and calibrate build their plans with it, by field name.

The engine owns the defaults and the clamps: a field left None is left out of the plan's JSON,
so the engine's own default applies (the 15 s timeout, threads lowered to the connections, ...),
and the engine checks every value. Python repeats none of it: the defaults the commands show and
the suites fill in are read from the schema the engine prints (`gauntlet-engine schema plan`),
and tests/test_plan_schema.py compares this model with that schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from gauntlet import schema

_ENGINE_FIELDS = schema.plan()["properties"]
#: The connections and load threads of a plan that gives none (`gauntlet run`, `sweep`, suites).
DEFAULT_CONNECTIONS: int = _ENGINE_FIELDS["connections"]["default"]
DEFAULT_THREADS: int = _ENGINE_FIELDS["threads"]["default"]
#: What a plan measures when it gives neither a request count, a duration nor sessions.
DEFAULT_DURATION_US: int = _ENGINE_FIELDS["duration_us"]["x-default-when-unbounded"]
#: How long a connect or a response may take when the plan says nothing.
DEFAULT_TIMEOUT_US: int = _ENGINE_FIELDS["timeout_us"]["default"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TlsSettings(_Strict):
    """What a plan fixes about TLS (engine: TlsPlan); None leaves the engine's choice."""

    version: str | None = None
    #: A suite by its rustls or IANA name, or several joined by ':' in order of preference.
    cipher: str | None = None
    resumption: bool | None = None


class WeightedPath(_Strict):
    path: str
    weight: float
    #: A string every response to this path must hold (its content marker); None: no check.
    expect: str | None = None


class Think(_Strict):
    kind: Literal["fixed", "uniform", "exponential"]
    mean_us: int | None = None
    min_us: int | None = None
    max_us: int | None = None


class Page(_Strict):
    name: str
    path: str
    embedded: list[str] | None = None
    download: bool | None = None
    #: A string the page's own response must hold (its content marker); None: no check.
    expect: str | None = None
    #: "https": served from the sessions' https_url over connections of its own.
    scheme: Literal["http", "https"] | None = None
    method: str | None = None
    #: The form body of a POST (application/x-www-form-urlencoded).
    body: str | None = None


class SessionType(_Strict):
    name: str
    weight: float
    think: Think
    pages: list[Page]
    #: The first page of a walk through `transitions`.
    start: str | None = None
    #: Per page, the probability of each next page or of "end"; None: the pages in order.
    transitions: dict[str, dict[str, float]] | None = None


class ArrivalPhase(_Strict):
    users_per_s: float
    duration_us: int


class QosThresholds(_Strict):
    good_us: int
    tolerable_us: int
    download_good_bytes_per_s: float
    download_tolerable_bytes_per_s: float


class SessionsPlan(_Strict):
    types: list[SessionType]
    if_modified_since_share: float | None = None
    users: int | None = None
    phases: list[ArrivalPhase] | None = None
    rampdown_us: int | None = None
    qos: QosThresholds | None = None
    seed: int | None = None
    #: Where pages with scheme https go.
    https_url: str | None = None


class IdlePlan(_Strict):
    """Connections held open beside the measured ones, idle or sending slowly (engine: IdlePlan)."""

    connections: int
    #: One byte of a request head that never ends, on each, this often; None: they send nothing.
    send_interval_us: int | None = None


class Plan(_Strict):
    """One engine run: where, what, how many connections, for how long (engine: Plan)."""

    url: str
    connections: int = DEFAULT_CONNECTIONS
    allow_remote: bool | None = None
    method: str | None = None
    headers: list[tuple[str, str]] | None = None
    body_base64: str | None = None
    #: "2" is HTTP/2: h2 through ALPN for https://, h2c with prior knowledge for http://.
    http_version: Literal["1.1", "1.0", "2"] | None = None
    #: HTTP/2 only: streams each connection keeps open at once (h2load's -m); None: 1. Not with
    #: sessions (a user's page and images are 2 streams of its one connection per target).
    streams_per_connection: int | None = None
    keepalive: bool | None = None
    #: The load threads' socket I/O: "epoll" (the engine's default) or "uring" (io_uring, plain http://).
    io: Literal["epoll", "uring"] | None = None
    #: µs a load thread's wait may hold responses back to gather more, on epoll or io_uring; 0: none; None:
    #: the engine's default (a warm-up tries one on epoll, and the run keeps it where it pays).
    io_batch_us: int | None = None
    #: The load threads' scheduling policy: "batch" (SCHED_BATCH) or "normal"; None: the engine's
    #: default, batch in a closed loop and normal under a schedule (a rate, sessions).
    scheduling: Literal["batch", "normal"] | None = None
    tls: TlsSettings | None = None
    calls_per_connection: int | None = None
    rate_per_s: float | None = None
    sessions: SessionsPlan | None = None
    threads: int | None = None
    requests: int | None = None
    duration_us: int | None = None
    warmup_us: int | None = None
    timeout_us: int | None = None
    start_at_unix_us: int | None = None
    timeline_histograms: bool | None = None
    paths: list[WeightedPath] | None = None
    #: A string every response to the URL's own path must hold (its content marker); None: no check.
    expect: str | None = None
    #: Local addresses the connections are bound to, round robin (127.0.0.2, ...); None: the kernel's.
    source_addresses: list[str] | None = None
    idle: IdlePlan | None = None

    @model_validator(mode="before")
    @classmethod
    def bounded(cls, fields: Any) -> Any:
        """A load bounded by nothing (no request count, no duration, no sessions) lasts DEFAULT_DURATION_US,
        as the engine would make it, so that the commands know how long it lasts."""
        if isinstance(fields, dict) and all(fields.get(name) is None for name in ("requests", "duration_us", "sessions")):
            return {**fields, "duration_us": DEFAULT_DURATION_US}
        return fields

    def all_connections(self) -> int:
        """The measured connections and the idle ones."""
        return all_connections(self.engine_json())

    def at(self, url: str) -> Plan:
        """The same load on another URL (a plan built before its server started)."""
        return self.model_copy(update={"url": url})

    def warm_up(self, requests: int) -> Plan:
        """`requests` requests of the same load, with no warm-up window of their own."""
        return self.model_copy(update={"requests": requests, "duration_us": None, "warmup_us": None})

    def engine_json(self) -> dict[str, Any]:
        """The plan as the engine reads it: a field left None is left out, so the engine's default
        applies. Inside TLS and sessions, what was not given is left out and what was given as None
        stays null (those are the engine's optional fields, which it echoes as null)."""
        found = self.model_dump(mode="json", exclude_none=True)
        for name, part in (("tls", self.tls), ("sessions", self.sessions)):
            if part is not None:
                found[name] = part.model_dump(mode="json", exclude_unset=True)
        return found



def all_connections(plan: dict[str, Any]) -> int:
    """The measured connections and the idle ones of a plan as the engine reads it."""
    return int(plan.get("connections", DEFAULT_CONNECTIONS)) + int((plan.get("idle") or {}).get("connections", 0))

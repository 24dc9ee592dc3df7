"""Suite files: which servers, which parts of a study (groups), and the grid of each part.

A group's axes take one value or a list of values (a grid axis); numeric axes also take a range
`{from: A, to: B, step: S}`. Every field is checked before anything starts; `quick` holds the
short variant's overrides, group by group.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from gauntlet.bounds import RANGE_VALUES_MAX
from gauntlet.model.bounded import (
    CallsPerConnection, Connections, Duration, HeapMb, Idle, IdleSendInterval, IoBatch, KeepaliveRequests, KeepaliveTimeout, Probes, Rate,
    Repeats, Requests, RestartEvery, Streams, Threads, Timeout, Users, Warmup, Workers,
)
from gauntlet.model.claims import CAPACITY, Claim
from gauntlet.store.figures import FIGURES
from gauntlet.plan import DEFAULT_CONNECTIONS, DEFAULT_THREADS

WORKLOADS = {
    "ST-1": "/webtest.html",
    "ST-2": "/image_small.gif",
    "ST-3": "/image_large.jpg",
    "DM": "/image_10k.png",
    "DT-1": "/hello.php",
    "DT-2": "/page.py",
    #: WebBench's workload tree: 360 files under /tree/, requested by a weighted mix (docs/suites.md).
    "tree": "/tree/",
}
PROTOCOLS = ("http", "https")
#: The most cases one group's grid may stand for.
GRID_CASES_MAX = 100_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _range_or_list(value: Any) -> Any:
    """`{from, to, step}` becomes the list it stands for; a single value a list of one."""
    if isinstance(value, dict):
        if set(value) != {"from", "to", "step"}:
            raise ValueError("a range is {from: A, to: B, step: S}")
        low, high, step = value["from"], value["to"], value["step"]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (low, high, step)):
            raise ValueError("a range's from, to and step are numbers")
        if step <= 0 or high < low:
            raise ValueError("a range needs from <= to and a positive step")
        count = int((high - low) / step + 1e-9) + 1
        if count > RANGE_VALUES_MAX:
            raise ValueError(f"a range of {count:,} values is too long: give at most {RANGE_VALUES_MAX:,} (a larger step)")
        return [low + i * step for i in range(count)]
    return value if isinstance(value, list) else [value]


Item = TypeVar("Item")
#: A grid axis: one value, a list of values, or a range of numbers.
Axis = Annotated[list[Item], BeforeValidator(_range_or_list), Field(min_length=1)]


class ServerEntry(_Strict):
    """A server kind in the suite, with settings every case on it shares (unless a group's axis says otherwise)."""

    kind: str
    workers: Workers | None = None
    threads_per_child: Workers | None = None
    max_request_workers: Workers | None = None
    min_spare_servers: Workers | None = None
    max_spare_servers: Workers | None = None
    java_heap_mb: HeapMb | None = None
    keepalive_timeout_s: KeepaliveTimeout | None = None
    keepalive_requests: KeepaliveRequests | None = None
    tls_version: Literal["1.2", "1.3"] | None = None
    cipher: str | None = None
    backend_workers: Workers | None = None
    backend_threads: Workers | None = None
    #: An application served by the server and its backend (servers/apps: `wordpress`).
    app: str | None = None
    #: Built-in server: processes serving its port, for more connections than one may open files.
    processes: Workers | None = None

    @field_validator("kind")
    @classmethod
    def known_kind(cls, kind: str, info: ValidationInfo) -> str:
        kinds = (info.context or {}).get("kinds")
        if kinds is not None and kind not in kinds:
            raise ValueError(f"'{kind}' is not a server kind; the kinds are {', '.join(kinds)}")
        return kind


def _server_entry(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


class Capacity(_Strict):
    start: Users = 10
    max_probes: Probes = 8
    #: A run at `start` before the first probe on each server started, unmeasured for the search:
    #: SPECweb's warm-up, so that JSP compilation and the JIT happen before measuring.
    warm_up: Warmup = 0


class Group(_Strict):
    """One part of a study: a grid of cases on (some of) the suite's servers."""

    name: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]*$")
    #: The suite's server kinds this group runs on (default: all of them).
    servers: list[str] | None = None
    model: Literal["closed", "rate", "sessions"] = "closed"
    # Server axes.
    workers: Axis[Workers] | None = None
    keepalive: Axis[bool] = [True]
    protocol: Axis[Literal["http", "https", "http+https"]] = ["http"]
    backend: Axis[str] | None = None
    backend_socket: Axis[Literal["unix", "tcp"]] | None = None
    backend_workers: Axis[Workers] | None = None
    #: PHP's opcode cache on or off (php-fpm, mod_php).
    opcache: Axis[bool] | None = None
    #: Where the specweb application keeps its PHP sessions: disk (the work dir) or memory (a tmpfs).
    php_sessions: Axis[Literal["disk", "memory"]] | None = None
    #: The Erlang VM's schedulers spin before they sleep (yaws, inets, mochiweb; false: `+sbwt none`).
    scheduler_busy_wait: Axis[bool] | None = None
    # Load axes.
    workload: Axis[str] | None = None
    path: Axis[Annotated[str, Field(pattern=r"^/")]] | None = None
    connections: Axis[Connections] | None = None
    rate_per_s: Axis[Rate] | None = None
    calls_per_connection: Axis[CallsPerConnection] | None = None
    #: "2": HTTP/2 (h2 with https, h2c with http); the server then serves HTTP/2 besides HTTP/1.1.
    http_version: Axis[Literal["1.1", "1.0", "2"]] = ["1.1"]
    #: HTTP/2 streams per connection; its HTTP/1.x cases run once, with none.
    streams: Axis[Streams] | None = None
    #: Connections held open beside the measured ones (0: none), counted apart (docs/load-models.md).
    idle: Axis[Idle] | None = None
    #: With idle: one byte of a request head on each this often (slowloris); None: they send nothing.
    idle_send_interval: IdleSendInterval | None = None
    # One value for every case of the group.
    requests: Requests | None = None
    duration: Duration | None = None
    warmup: Warmup | None = None
    timeout: Timeout | None = None
    threads: Threads | None = None
    #: Sessions: a shipped load file's name (support-like) or a path relative to the suite file.
    load: str | None = None
    #: Sessions: fields of the load file replaced for this group (measure: 5s, ...).
    load_overrides: dict[str, Any] = {}
    users: Axis[Users] | None = None
    capacity: Capacity | None = None

    @field_validator("workload")
    @classmethod
    def known_workload(cls, workloads: list[str] | None) -> list[str] | None:
        for workload in workloads or ():
            if workload not in WORKLOADS:
                raise ValueError(f"'{workload}' is not a workload; the workloads are {', '.join(WORKLOADS)}")
        return workloads

    @field_validator("backend")
    @classmethod
    def known_backend(cls, backends: list[str] | None, info: ValidationInfo) -> list[str] | None:
        pages: dict[str, str] = (info.context or {}).get("backend_pages", {})
        for backend in backends or ():
            if pages and backend not in pages:
                raise ValueError(f"'{backend}' is not a backend; the backends are {', '.join(pages)}")
        return backends

    @model_validator(mode="after")
    def dynamic_pages_match_their_backends(self, info: ValidationInfo) -> Group:
        """DT-1 is PHP and DT-2 Python: a page is only served by backends of its language."""
        pages: dict[str, str] = (info.context or {}).get("backend_pages", {})
        dynamic = [w for w in self.workload or () if WORKLOADS[w] in pages.values()]
        for workload in dynamic:
            backends: list[str | None] = [*self.backend] if self.backend else [None]
            for backend in backends:
                if backend is None or pages.get(backend) != WORKLOADS[workload]:
                    raise ValueError(
                        f"{workload} ({WORKLOADS[workload]}) needs a backend that serves it, not {backend}: "
                        "put PHP and Python backends in groups of their own"
                    )
        return self

    @property
    def grid_cases(self) -> int:
        """The cases the grid stands for on one server: every list field but `servers` is an axis."""
        axes = [value for value in self.__dict__.values() if isinstance(value, list) and value is not self.servers]
        return math.prod(len(axis) for axis in axes)

    @model_validator(mode="after")
    def a_grid_of_bounded_size(self) -> Group:
        if self.grid_cases > GRID_CASES_MAX:
            raise ValueError(
                f"the grid stands for {self.grid_cases:,} cases: give at most {GRID_CASES_MAX:,} (fewer values per axis)"
            )
        return self

    @model_validator(mode="after")
    def consistent(self) -> Group:
        if self.model == "sessions":
            if self.load is None:
                raise ValueError("a sessions group names its load file: load: support-like")
            if self.users is not None and self.capacity is not None:
                raise ValueError("a sessions group gives users: [..] or capacity: {start, max_probes}, not both")
            if "1.0" in self.http_version:
                raise ValueError("a sessions group speaks HTTP/1.1 or 2: take \"1.0\" out of http_version")
            if self.streams is not None:
                raise ValueError(
                    "a sessions group takes no streams: over HTTP/2 each user's page and images are 2 streams of one connection"
                )
        else:
            if self.load is not None or self.users is not None or self.capacity is not None:
                raise ValueError(f"load, users and capacity belong to sessions groups, not to a {self.model} group")
            if (self.workload is None) == (self.path is None):
                raise ValueError("give the pages to load as workload: [ST-1, ..] or path: [/..], one of them")
        if self.model == "rate" and self.rate_per_s is None:
            raise ValueError("a rate group gives rate_per_s: a list or {from, to, step}")
        if self.model != "rate" and self.rate_per_s is not None:
            raise ValueError("rate_per_s belongs to a rate group: set model: rate")
        if self.requests is not None and self.duration is not None:
            raise ValueError("give requests or duration per case, not both")
        if self.streams is not None and "2" not in self.http_version:
            raise ValueError("streams are HTTP/2's: add \"2\" to http_version, or leave streams out")
        return self


class Defaults(_Strict):
    """Load settings a group inherits when it does not give its own."""

    connections: Connections = DEFAULT_CONNECTIONS
    threads: Threads = DEFAULT_THREADS
    requests: Requests | None = None
    duration: Duration | None = None
    warmup: Warmup | None = None
    #: None: the engine's default.
    timeout: Timeout | None = None
    #: The client's batch window in every case (0: none); None: the engine's default, where each
    #: case's warm-up tries it and keeps it or not.
    io_batch: IoBatch | None = None


class Suite(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    servers: list[Annotated[ServerEntry, BeforeValidator(_server_entry)]] = Field(min_length=1)
    defaults: Defaults = Defaults()
    groups: list[Group] = Field(min_length=1)
    #: Measurements per case; the server restarts after every `restart_every` of them (0: never).
    repeats: Repeats = 1
    restart_every: RestartEvery = 0
    #: The --quick variant: per group name, the fields that replace the group's.
    quick: dict[str, dict[str, Any]] = {}
    #: The --full variant (a study at its own length when the default is scaled down), the same way.
    full: dict[str, dict[str, Any]] = {}
    #: The study's conclusions, as claims `gauntlet findings` judges against a run.
    findings: list[Claim] = []

    @model_validator(mode="after")
    def claims_named_once_on_stored_figures(self) -> Suite:
        ids = [claim.id for claim in self.findings]
        if len(ids) != len(set(ids)):
            raise ValueError("finding ids repeat: give every claim its own id")
        for claim in self.findings:
            figure = getattr(claim, "figure", None)
            if figure is not None and figure not in FIGURES and figure != CAPACITY:
                raise ValueError(
                    f"finding {claim.id} is about '{figure}', which is not a stored figure: "
                    "name one of docs/results-store.md's figures, or capacity"
                )
        return self

    @model_validator(mode="after")
    def every_case_measures_something(self) -> Suite:
        if self.defaults.requests is None and self.defaults.duration is None:
            for group in self.groups:
                if group.model != "sessions" and group.requests is None and group.duration is None:
                    raise ValueError(
                        f"group {group.name} measures neither a number of requests nor a time: "
                        "give requests: 100k or duration: 10s, in the group or in defaults"
                    )
        return self

    @model_validator(mode="after")
    def groups_fit_the_servers(self) -> Suite:
        kinds = [entry.kind for entry in self.servers]
        if len(kinds) != len(set(kinds)):
            raise ValueError("a server kind is listed twice: list each once, vary its settings in groups")
        names = [group.name for group in self.groups]
        if len(names) != len(set(names)):
            raise ValueError("group names repeat: give every group its own name")
        for group in self.groups:
            for kind in group.servers or ():
                if kind not in kinds:
                    raise ValueError(f"group {group.name} runs on '{kind}', which the suite's servers do not list")
        for variant, overrides in (("quick", self.quick), ("full", self.full)):
            for name in overrides:
                if name not in names:
                    raise ValueError(f"{variant} names the group '{name}', which the suite does not have")
        return self

"""One set of bounds for every number Gauntlet reads: each numeric option of the command line and
each numeric field of the suite and load files takes its value through one entry of TABLE, so a
value is refused in the same words wherever it is given (`-d`: "at most 720h, not 1000000h"; a
file: "FILE:LINE: groups.0.duration: at most 720h, not 1000000h").

A bound is narrower than what the engine accepts (past it a number is a typo, and none overflows
the engine's 64-bit microseconds); where the engine exports a limit of its own (its plan schema,
`gauntlet-engine schema plan`), the entry reads it from there. tests/test_bounds.py checks every
entry against the engine's schema, walks the table through the command line and the files, and
checks that docs/bounds.md lists it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from gauntlet import schema
from gauntlet.units import DURATION_UNITS_US, count_of, duration_us_of, link_bits_per_s_of

#: duration: microseconds (text with a unit); count: a whole number (text may say 10k, 1m); number:
#: any finite number; link: bits per second (text as 1gbit).
Unit = Literal["duration", "count", "number", "link"]

#: Longer than anyone measures; it keeps every sum of durations inside the engine's 64-bit microseconds.
DURATION_MAX_US = 720 * DURATION_UNITS_US["h"]
#: Requests and calls: a trillion is past any run, and far inside 64 bits.
COUNT_MAX = 10**12
#: Connections, users, workers: a million.
SIZE_MAX = 1_000_000
#: Rates: requests, users or bytes per second.
PER_SECOND_MAX = 1e12
#: The most values one range (a suite's `{from, to, step}`, sweep's --levels or --from/--to/--step) may stand for.
RANGE_VALUES_MAX = 10_000
U64_MAX = 2**64 - 1
#: The largest value of each integer format of the engine's plan schema.
_FORMAT_MAX = {"uint": U64_MAX, "uint64": U64_MAX, "uint32": 2**32 - 1, "uint16": 2**16 - 1}


@cache
def engine_limit(field: str) -> tuple[float, float]:
    """The least and the most the engine's plan accepts in `field` (a dotted path through the
    plan's objects, lists and optional parts: "sessions.phases.duration_us")."""
    plan = schema.plan()
    node: dict[str, Any] = plan
    for name in field.split("."):
        node = _object_of(plan, node)["properties"][name]
    node = _resolved(plan, node)
    low = node.get("minimum", -math.inf)
    high = node.get("maximum", _FORMAT_MAX.get(node.get("format", ""), math.inf))
    return low, high


def _resolved(plan: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node` past its $ref and its optional (anyOf with null) wrapping."""
    while True:
        if "$ref" in node:
            node = plan["$defs"][node["$ref"].rpartition("/")[2]]
        elif "anyOf" in node:
            node = next(part for part in node["anyOf"] if part.get("type") != "null")
        else:
            return node


def _object_of(plan: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The object `node` holds: itself, its list's items, or the union of a oneOf's variants."""
    node = _resolved(plan, node)
    if "items" in node:
        return _object_of(plan, node["items"])
    if "oneOf" in node:
        variants = [_resolved(plan, variant) for variant in node["oneOf"]]
        return {"properties": {k: v for variant in variants for k, v in variant.get("properties", {}).items()}}
    return node


@dataclass(frozen=True)
class Bound:
    """The values one quantity may take, and where it is given."""

    name: str
    unit: Unit
    low: float
    high: float
    #: The low end itself is refused ("above 0").
    above_low: bool = False
    #: The value that turns it off (no idle connections): not given to the engine.
    off: float | None = None
    #: The engine plan's fields the value becomes (tests/test_bounds.py checks the range lies inside theirs).
    engine: tuple[str, ...] = ()
    #: The options (and arguments) that take it, as "COMMAND OPTION" ("COMMAND ARGUMENT").
    options: tuple[str, ...] = ()
    #: The file fields that take it, as "suite FIELD" or "load FIELD" ([] for any item of a list).
    fields: tuple[str, ...] = ()

    def show(self, value: float) -> str:
        """`value` as users write it: 720h, 1,000,000, 0.5, 1,000,000,000 bit/s."""
        if self.unit == "duration":
            unit = next((name for name in ("h", "m", "s", "ms") if value % DURATION_UNITS_US[name] == 0), "us")
            return f"{value / DURATION_UNITS_US[unit]:g}{unit}" if value else "0s"
        text = f"{int(value):,}" if float(value).is_integer() else f"{value:g}"
        return f"{text} bit/s" if self.unit == "link" else text

    def range_text(self) -> str:
        if self.above_low:
            return f"above {self.show(self.low)}, at most {self.show(self.high)}"
        return f"from {self.show(self.low)} to {self.show(self.high)}"

    def check(self, value: float, given: object) -> Any:
        """`value` if it lies in the bound; ValueError naming the bound otherwise (`given` is what
        the user wrote)."""
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number {self.range_text()}, not {given}")
        if value < self.low or (self.above_low and value == self.low):
            rule = f"above {self.show(self.low)}" if self.above_low else f"at least {self.show(self.low)}"
            raise ValueError(f"{rule}, not {given}")
        if value > self.high:
            raise ValueError(f"at most {self.show(self.high)}, not {given}")
        return value

    def read(self, text: str, bare_seconds: bool) -> Any:
        """The value `text` stands for, in the bound's unit; ValueError saying how to write it."""
        if self.unit == "duration":
            return self.check(duration_us_of(text.strip(), bare_seconds), text)
        if self.unit == "link":
            return self.check(link_bits_per_s_of(text), text)
        if self.unit == "count":
            return self.whole(count_of(text), text)
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
        return self.check(number, text)

    def whole(self, value: float, given: object) -> int:
        self.check(value, given)
        if not float(value).is_integer():
            raise ValueError(f"a whole number {self.range_text()}, not {given}")
        return int(value)

    def from_option(self, value: str | float) -> Any:
        """An option's text (a bare duration is seconds), or its default as the table's unit already."""
        if isinstance(value, str):
            return self.read(value, bare_seconds=True)
        return self.whole(value, value) if self.unit in ("count", "duration") else self.check(value, value)

    def from_file(self, value: Any) -> Any:
        """A file's value (a duration carries its unit: '5s', '0s'); for pydantic's BeforeValidator."""
        if isinstance(value, str):
            return self.read(value, bare_seconds=False)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{value!r} is not a number")
        if self.unit == "duration":
            raise ValueError(f"{value!r} has no unit: write it as 500ms, 5s, 30m or 1h")
        return self.whole(value, value) if self.unit == "count" else float(self.check(value, value))


def _durations(name: str, low_us: float, high_us: float = DURATION_MAX_US, **where: Any) -> Bound:
    return Bound(name, "duration", low_us, high_us, **where)


DURATION = _durations(
    "duration", 1, engine=("duration_us", "sessions.phases.duration_us"),
    options=("run -d", "sweep concurrency -d", "sweep rate -d", "calibrate -d", "calibrate-noise -d"),
    fields=("suite defaults.duration", "suite groups[].duration", "load measure", "load phases[].duration"),
)
TIMEOUT = _durations(
    "timeout", 1, engine=("timeout_us",),
    options=("run --timeout", "sweep concurrency --timeout", "sweep rate --timeout"),
    fields=("suite defaults.timeout", "suite groups[].timeout"),
)
WARMUP = _durations(
    "warmup", 0, engine=("warmup_us", "sessions.rampdown_us"),
    options=("run --warmup", "capacity --warm-up", "calibrate-noise --warmup"),
    fields=("suite defaults.warmup", "suite groups[].warmup", "suite groups[].capacity.warm_up", "load ramp_up", "load warm_up",
            "load ramp_down"),
)
THINK = _durations(
    "think", 0, engine=("sessions.types.think.mean_us", "sessions.types.think.min_us", "sessions.types.think.max_us"),
    fields=("load sessions[].think",),
)
QOS_TIME = _durations(
    "qos_time", 1, engine=("sessions.qos.good_us", "sessions.qos.tolerable_us"), fields=("load qos.good", "load qos.tolerable")
)
IDLE_SEND_INTERVAL = _durations(
    "idle_send_interval", engine_limit("idle.send_interval_us")[0], engine=("idle.send_interval_us",),
    options=("run --idle-send-interval",), fields=("suite groups[].idle_send_interval",),
)
IO_BATCH = _durations(
    "io_batch", 0, engine_limit("io_batch_us")[1], engine=("io_batch_us",), options=("run --io-batch",),
    fields=("suite defaults.io_batch",),
)
REQUESTS = Bound(
    "requests", "count", 1, COUNT_MAX, engine=("requests",),
    options=("run -n", "sweep concurrency -n", "run --warmup-requests", "sweep concurrency --warmup-requests",
             "sweep rate --warmup-requests"),
    fields=("suite defaults.requests", "suite groups[].requests"),
)
CALLS_PER_CONNECTION = Bound(
    "calls_per_connection", "count", 1, COUNT_MAX, engine=("calls_per_connection",),
    options=("run --calls-per-connection", "sweep rate --calls-per-connection"), fields=("suite groups[].calls_per_connection",),
)
CONNECTIONS = Bound(
    "connections", "count", 1, SIZE_MAX, engine=("connections",),
    options=("run -c", "sweep rate -c", "calibrate -c", "calibrate-noise -c", "doctor -c"),
    fields=("suite defaults.connections", "suite groups[].connections"),
)
#: A load thread per core is the point; the engine uses at most one per connection.
THREADS = Bound(
    "threads", "count", 1, 1_024, engine=("threads",),
    options=("run -t", "sweep concurrency -t", "sweep rate -t", "calibrate -t", "calibrate-noise -t"),
    fields=("suite defaults.threads", "suite groups[].threads"),
)
STREAMS = Bound(
    "streams", "count", 1, SIZE_MAX, engine=("streams_per_connection",),
    options=("run --streams", "sweep concurrency --streams", "sweep rate --streams", "capacity --streams", "calibrate --streams"),
    fields=("suite groups[].streams",),
)
IDLE = Bound(
    "idle", "count", 0, SIZE_MAX, off=0, engine=("idle.connections",), options=("run --idle",), fields=("suite groups[].idle",)
)
RATE = Bound(
    "rate", "number", 0, PER_SECOND_MAX, above_low=True, engine=("rate_per_s",),
    options=("run -R", "sweep rate --from", "sweep rate --to", "sweep rate --step"), fields=("suite groups[].rate_per_s",),
)
USERS = Bound(
    "users", "count", 1, SIZE_MAX, engine=("sessions.users",), options=("capacity --start",),
    fields=("load users", "load max_users", "suite groups[].users", "suite groups[].capacity.start"),
)
ARRIVAL_RATE = Bound(
    "arrival_rate", "number", 0, PER_SECOND_MAX, above_low=True, engine=("sessions.phases.users_per_s",),
    fields=("load phases[].users_per_s",),
)
DOWNLOAD_RATE = Bound(
    "download_rate", "number", 0, PER_SECOND_MAX, above_low=True,
    engine=("sessions.qos.download_good_bytes_per_s", "sessions.qos.download_tolerable_bytes_per_s"),
    fields=("load qos.download_good_bytes_per_s", "load qos.download_tolerable_bytes_per_s"),
)
SHARE = Bound(
    "share", "number", 0, 1, engine=("sessions.if_modified_since_share",),
    options=("run --error-share", "sweep concurrency --error-share", "sweep rate --error-share"),
    fields=("load if_modified_since", "load qos.good_share", "load qos.good_or_tolerable_share", "load sessions[].transitions"),
)
#: A share of the mix; a million to one is past any study's.
WEIGHT = Bound("weight", "number", 0, 1e6, above_low=True, engine=("sessions.types.weight",), fields=("load sessions[].weight",))
#: Every think time multiplied by this (a quick variant's 0.25).
THINK_SCALE = Bound("think_scale", "number", 0, 100, above_low=True, fields=("load think_scale",))
SEED = Bound("seed", "count", 0, U64_MAX, engine=("sessions.seed",), fields=("load seed",))
REPEATS = Bound(
    "repeats", "count", 1, SIZE_MAX,
    options=("run --repeat", "sweep concurrency --repeat", "sweep rate --repeat", "suite run --repeat", "calibrate --rounds"),
    fields=("suite repeats", "load iterations"),
)
#: 0: never.
RESTART_EVERY = Bound("restart_every", "count", 0, SIZE_MAX, fields=("suite restart_every",))
#: A/A pairs of `calibrate noise`: two at least, for a spread.
PAIRS = Bound("pairs", "count", 2, 1_000, options=("calibrate-noise --pairs",))
PROBES = Bound("probes", "count", 1, 1_000, options=("capacity --max-probes",), fields=("suite groups[].capacity.max_probes",))
WORKERS = Bound(
    "workers", "count", 1, SIZE_MAX,
    options=("run --workers", "run --backend-workers", "sweep concurrency --workers", "sweep rate --workers",
             "capacity --workers", "calibrate --workers", "calibrate-noise --workers", "serve --threads", "serve --processes"),
    fields=("suite servers[].workers", "suite servers[].threads_per_child", "suite servers[].max_request_workers",
            "suite servers[].min_spare_servers", "suite servers[].max_spare_servers",
            "suite servers[].backend_workers", "suite servers[].backend_threads", "suite servers[].processes",
            "suite groups[].workers", "suite groups[].backend_workers"),
)
#: A JVM's largest heap (Tomcat's -Xmx), MiB: at least the 64 MiB it starts with (-Xms), a TiB at most.
HEAP_MB = Bound("java_heap_mb", "count", 64, 2**20, fields=("suite servers[].java_heap_mb",))
KEEPALIVE_TIMEOUT_S = Bound("keepalive_timeout_s", "count", 1, SIZE_MAX, fields=("suite servers[].keepalive_timeout_s",))
#: The servers keep it in a C int; 0: unlimited.
KEEPALIVE_REQUESTS = Bound("keepalive_requests", "count", 0, 2**31 - 1, fields=("suite servers[].keepalive_requests",))
#: Local worker processes: one per core is the point.
AGENTS = Bound(
    "agents", "count", 1, 1_024,
    options=("run --agents", "sweep concurrency --agents", "sweep rate --agents", "capacity --agents", "suite run --agents"),
)
PORT = Bound("port", "count", 0, 2**16 - 1, options=("serve --port",))
#: The built-in server's stalls, in milliseconds: an hour at most.
STALL_MS = Bound("stall_ms", "count", 0, 3_600_000, options=("serve --stall-ms", "serve --stall-every-ms"))
LINK = Bound("link", "link", 0, 1e15, above_low=True, options=("run --link", "sweep concurrency --link", "sweep rate --link"))
#: A regression in percent (points for shares).
THRESHOLD = Bound("threshold", "number", 0, 1e6, options=("compare --threshold",))

#: A run's id in the results store: SQLite's INTEGER.
RUN_ID = Bound(
    "run_id", "count", 1, 2**63 - 1,
    options=("compare RUN_A", "compare RUN_B", "export RUN", "findings RUN", "report RUNS", "suite run --resume"),
)

TABLE: tuple[Bound, ...] = (
    DURATION, TIMEOUT, WARMUP, THINK, QOS_TIME, IDLE_SEND_INTERVAL, IO_BATCH, REQUESTS, CALLS_PER_CONNECTION, CONNECTIONS,
    THREADS, STREAMS, IDLE, RATE, USERS, ARRIVAL_RATE, DOWNLOAD_RATE, SHARE, WEIGHT, THINK_SCALE, SEED, REPEATS, RESTART_EVERY, PROBES,
    PAIRS, WORKERS, HEAP_MB, KEEPALIVE_TIMEOUT_S, KEEPALIVE_REQUESTS, AGENTS, PORT, STALL_MS, LINK, THRESHOLD, RUN_ID,
)


def markdown_table() -> str:
    """The table as docs/bounds.md prints it."""
    rows = ["| name | unit | min | max | engine field | options | file fields |", "|---|---|---|---|---|---|---|"]
    for bound in TABLE:
        low = f"above {bound.show(bound.low)}" if bound.above_low else bound.show(bound.low)
        cells = [bound.name, bound.unit, low, bound.show(bound.high), ", ".join(bound.engine) or "-",
                 ", ".join(f"`{o}`" for o in bound.options) or "-", ", ".join(f"`{f}`" for f in bound.fields) or "-"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"

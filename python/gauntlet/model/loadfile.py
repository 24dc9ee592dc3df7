"""Load files (YAML): session types, arrivals and QoS for the engine's session model.

Every mistake is reported before any load is sent, as one line `FILE:LINE: field: message`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from gauntlet.errors import GauntletError
from gauntlet.plan import DEFAULT_THREADS, ArrivalPhase, Page, Plan, QosThresholds, SessionsPlan, SessionType, Think
from gauntlet.bounds import THINK
from gauntlet.model.bounded import (
    ArrivalRate, DownloadRate, Duration, QosTime, Repeats, Seed, Share, ThinkScale, Users, Warmup, Weight,
)
from gauntlet.yamlfile import printable, read_yaml, validate


def _think(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and set(value) == {"uniform"}:
        bounds = value["uniform"]
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise ValueError("a uniform think time is {uniform: [MIN, MAX]}, two durations")
        low, high = (THINK.from_file(v) for v in bounds)
        if low > high:
            raise ValueError("uniform think times go from the smaller to the larger: swap them")
        return {"kind": "uniform", "min_us": low, "max_us": high}
    if isinstance(value, dict) and set(value) == {"exponential"}:
        return {"kind": "exponential", "mean_us": THINK.from_file(value["exponential"])}
    if isinstance(value, dict):
        raise ValueError("a think time is a duration, {uniform: [MIN, MAX]} or {exponential: MEAN}")
    return {"kind": "fixed", "mean_us": THINK.from_file(value)}


ThinkTime = Annotated[dict[str, Any], BeforeValidator(_think)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class PageSpec(_Strict):
    name: str = Field(min_length=1)
    path: str = Field(pattern=r"^/")
    embedded: list[Annotated[str, Field(pattern=r"^/")]] = []
    download: bool = False
    #: A string the page's own response must hold (a `content` error otherwise): its content marker.
    expect: str | None = None
    scheme: Literal["http", "https"] = "http"
    method: Literal["GET", "POST"] = "GET"
    #: The form body of a POST, sent as application/x-www-form-urlencoded.
    body: str | None = None

    @model_validator(mode="after")
    def body_with_post(self) -> PageSpec:
        if self.body is not None and self.method != "POST":
            raise ValueError(f"page '{self.name}' has a body but is a GET: add method: POST")
        return self


#: The name that ends a session in a transition row.
END = "end"
#: How far a row's sum may be from 1.
ROW_SUM_TOLERANCE = 1e-6
#: What a capacity search varies (a probe's param): simultaneous users, or with arrival phases the
#: busiest phase's arrival rate.
LEVEL_NAMES = ("users", "peak_users_per_s")


class SessionSpec(_Strict):
    name: str = Field(min_length=1)
    weight: Weight = 1.0
    think: ThinkTime = {"kind": "fixed", "mean_us": 0}
    pages: list[PageSpec] = Field(min_length=1)
    #: The first page of the walk through `transitions` (default: the first page).
    start: str | None = None
    #: Per page, the probability of each next page or of `end`; without it the pages run in order.
    transitions: dict[str, dict[str, Share]] | None = None

    @model_validator(mode="after")
    def walk_names_its_pages(self) -> SessionSpec:
        names = {page.name for page in self.pages}
        if self.start is not None and self.start not in names:
            raise ValueError(f"start '{self.start}' is not a page of '{self.name}': name one of {sorted(names)}")
        if self.start is not None and self.transitions is None:
            raise ValueError(f"'{self.name}' has a start but no transitions: give transitions, or drop start")
        for source, row in (self.transitions or {}).items():
            if source not in names:
                raise ValueError(f"transitions row '{source}' is not a page of '{self.name}': name one of {sorted(names)}")
            unknown = sorted(set(row) - names - {END})
            if unknown:
                raise ValueError(f"transitions row '{source}' goes to '{unknown[0]}', not a page: name a page or '{END}'")
            total = sum(row.values())
            if abs(total - 1) > ROW_SUM_TOLERANCE:
                raise ValueError(f"transitions row '{source}' sums to {total:g}: make its probabilities sum to 1")
        return self


class PhaseSpec(_Strict):
    users_per_s: ArrivalRate
    duration: Duration


class QosSpec(_Strict):
    good: QosTime = 2_000_000
    tolerable: QosTime = 4_000_000
    download_good_bytes_per_s: DownloadRate = 99_000
    download_tolerable_bytes_per_s: DownloadRate = 95_000
    good_share: Share = 0.95
    good_or_tolerable_share: Share = 0.99


class LoadFile(_Strict):
    sessions: list[SessionSpec] = Field(min_length=1)
    if_modified_since: Share = 0.0
    users: Users | None = None
    phases: list[PhaseSpec] | None = Field(default=None, min_length=1)
    max_users: Users = 1000
    ramp_up: Warmup = 0
    warm_up: Warmup = 0
    measure: Duration | None = None
    ramp_down: Warmup = 0
    iterations: Repeats = 1
    #: Every think time multiplied by this: a suite's quick variant shortens them (0.25: a quarter)
    #: so that a capacity search finds its invalid level at fewer users, in fewer probes.
    think_scale: ThinkScale = 1.0
    qos: QosSpec = QosSpec()
    seed: Seed = 1

    @model_validator(mode="after")
    def one_way_of_having_users(self) -> LoadFile:
        if (self.users is None) == (self.phases is None):
            raise ValueError("give either users (simultaneous sessions) or phases (arrivals), not both or neither")
        if self.users is not None and self.measure is None:
            raise ValueError("with users, give the measurement time: measure: 5m")
        names = [page.name for session in self.sessions for page in session.pages]
        if len(names) != len(set(names)):
            raise ValueError("page names repeat: give every page its own name")
        return self

    def with_users(self, users: int) -> LoadFile:
        return self.model_copy(update={"users": users})

    @property
    def level_name(self) -> str:
        """What a capacity search varies: simultaneous users, or with arrival phases the rate of
        the busiest phase (new users per second), the others keeping their share of it."""
        return LEVEL_NAMES[0] if self.phases is None else LEVEL_NAMES[1]

    def at_level(self, level: int) -> LoadFile:
        """The load at `level` of `level_name`."""
        if self.phases is None:
            return self.with_users(level)
        scale = level / max(phase.users_per_s for phase in self.phases)
        phases = [phase.model_copy(update={"users_per_s": phase.users_per_s * scale}) for phase in self.phases]
        return self.model_copy(update={"phases": phases})

    def phases_text(self) -> str | None:
        """The arrival phases in words ("10/s for 60s, 45/s for 20s"), None with a fixed number of users."""
        if self.phases is None:
            return None
        return ", ".join(f"{p.users_per_s:g}/s for {p.duration / 1e6:g}s" for p in self.phases)

    @property
    def uses_https(self) -> bool:
        return any(page.scheme == "https" for session in self.sessions for page in session.pages)

    def _scaled(self, think: dict[str, Any]) -> Think:
        """A session's think time, its durations multiplied by `think_scale`."""
        return Think(**{name: round(value * self.think_scale) if name.endswith("_us") else value for name, value in think.items()})

    def to_plan(self, url: str, https_url: str | None = None) -> Plan:
        """The engine plan: the sessions, the windows, and room for two connections per user and target.

        The `scheme: https` pages go to `https_url` (a lab server's second, HTTPS port), else to
        `url` itself, which must then be https (the whole workload over TLS; docs/load-files.md).
        An empty `url` is a plan not yet aimed (sized, not run)."""
        qos = self.qos
        if self.uses_https and https_url is None:
            if url and not url.lower().startswith("https://"):
                raise GauntletError(
                    printable(f"the load has https pages but the target {url} is plain http"),
                    "Serve it over TLS (tls: true, or an https:// URL), or from a server with an HTTPS port too "
                    "(protocol: http+https)",
                )
            https_url = url
        sessions = SessionsPlan(
            types=[
                SessionType(
                    name=s.name,
                    weight=s.weight,
                    think=self._scaled(s.think),
                    pages=[Page(**p.model_dump(exclude_none=True)) for p in s.pages],
                    start=s.start,
                    transitions=s.transitions,
                )
                for s in self.sessions
            ],
            if_modified_since_share=self.if_modified_since,
            users=self.users,
            phases=None if self.phases is None else [ArrivalPhase(users_per_s=p.users_per_s, duration_us=p.duration) for p in self.phases],
            rampdown_us=self.ramp_down,
            qos=QosThresholds(
                good_us=qos.good,
                tolerable_us=qos.tolerable,
                download_good_bytes_per_s=qos.download_good_bytes_per_s,
                download_tolerable_bytes_per_s=qos.download_tolerable_bytes_per_s,
            ),
            seed=self.seed,
            https_url=(https_url or None) if self.uses_https else None,
        )
        return Plan(
            url=url,
            connections=(4 if self.uses_https else 2) * (self.users or self.max_users),
            threads=DEFAULT_THREADS,
            warmup_us=self.ramp_up + self.warm_up,
            duration_us=self.measure,
            sessions=sessions,
        )


LOADS = Path(__file__).parent / "loads"
DOC = "docs/load-files.md"


def load(path: Path, overrides: dict[str, Any] | None = None) -> LoadFile:
    """The load file at `path`, with `overrides` replacing its top-level fields (a suite's quick variant)."""
    data, lines = read_yaml(path, "load file", DOC)
    return validate(path, {**data, **(overrides or {})}, lines, LoadFile, DOC)


def find(name: str, relative_to: Path) -> Path:
    """A load file by the name of a shipped one (support-like) or by a path relative to `relative_to`."""
    for candidate in (relative_to / name, LOADS / f"{name}.yaml"):
        if candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(p.stem for p in LOADS.glob("*.yaml")))
    raise GauntletError(printable(f"there is no load file '{name}'"), f"Name a shipped one ({shipped}) or a file next to the suite")

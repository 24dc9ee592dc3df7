"""Who watches a measuring command while it runs (`--out jsonl:FILE`, the live view): each case's
start, each second of its timeline the moment the engine has it final, and its end with the record
as stored (result, bottleneck labels, error).

A command (`run`, `sweep`, `capacity`, `suite run`) opens a `Feed` over its observers for as long
as it measures; `lab.measure.measure_run` finds it (`current`) and hands it the case's seconds, and
the record goes to `Feed.ended` where the command stores it. docs/architecture.md says how an
observer is added.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

from gauntlet import engine
from gauntlet.model.record import CaseRecord, case_key

if TYPE_CHECKING:
    from gauntlet.monitor.sampler import Sampler
    from gauntlet.plan import Plan
    from gauntlet.servers.base import ServerInstance


@dataclass(frozen=True)
class Case:
    """The case being measured, as its observers are told of it."""

    #: run, sweep, capacity or suite.
    command: str
    #: The store's run; None until the store holds it (run, sweep and capacity begin it with their
    #: first case's record) and with --no-store.
    run_id: int | None
    #: The case's params and their key, as the store keeps them (model.record.case_key).
    params: dict[str, Any]
    key: str
    repeat: int
    #: 0-based: the cases this command ended before this one.
    index: int
    #: The cases the command plans: a suite's still to measure (a capacity search counted once,
    #: though each of its probes is a case), a sweep's steps times its repeats, capacity's most probes.
    planned: int | None
    server_kind: str | None
    #: As stored: `1.22.1; php-fpm 8.2.36`; None for a URL given.
    server_version: str | None
    started_unix_ms: int


class Observer(Protocol):
    """Told of a command's cases in order; called in the command's thread, so what it does delays
    the next second's delivery (not the load, which runs in the engine's threads)."""

    def case_started(self, case: Case) -> None: ...

    #: One entry of the result's `timeline` (docs/results.md), without its `histogram`.
    def second(self, case: Case, second: engine.Second) -> None: ...

    #: A sample of the server's processes (monitor.sampler.TimelinePoint as a dict, as the result's
    #: `server.timeline` stores it), told with the second that follows it; only for a server
    #: Gauntlet started.
    def server_sample(self, case: Case, point: dict[str, Any]) -> None: ...

    #: The record as stored: result (None when the case never ran) with `bottleneck`, labels, error.
    def case_ended(self, case: Case, record: CaseRecord) -> None: ...

    #: The command ends (its observers are closed once, even on an error or Ctrl-C).
    def close(self) -> None: ...


_current: contextvars.ContextVar[Feed | None] = contextvars.ContextVar("gauntlet_feed", default=None)


def current() -> Feed | None:
    """The feed of the command measuring now, if it has one open with observers (without, the
    engine is not asked for its seconds)."""
    feed = _current.get()
    return feed if feed is not None and feed.observers else None


def running_version(server: ServerInstance) -> str | None:
    """The server's version, and its backend's when it has one: `1.22.1; php-fpm 8.2.36`."""
    if server.version is None:
        return None
    backend = server.spec.backend
    return server.version + (f"; {backend} {server.backend_version}" if backend and server.backend_version else "")


class Feed:
    """A command's cases handed to its observers. `params_of` names the case a plan measures
    (run, sweep); a command that knows it better says `next_case` before measuring (suite, capacity)."""

    def __init__(
        self, command: str, observers: Sequence[Observer], planned: int | None = None,
        params_of: Callable[[Plan], dict[str, Any]] | None = None, run_id: int | None = None,
    ) -> None:
        self.command = command
        self.observers = observers
        self.planned = planned
        self.params_of = params_of
        self.run_id = run_id
        self._next: tuple[dict[str, Any], int] | None = None
        self._case: Case | None = None
        self._told_seconds = 0
        #: The current case's server monitor, whose samples are told with the seconds.
        self._sampler: Sampler | None = None
        self._told_samples = 0
        self._ended = 0
        #: The next repeat of each case key, for cases named by `params_of`.
        self._repeats: dict[str, int] = {}
        self._token: contextvars.Token[Feed | None] | None = None

    def next_case(self, params: dict[str, Any], repeat: int) -> None:
        self._next = (params, repeat)

    def began(self, plan: Plan, server: ServerInstance | None) -> Callable[[engine.Second], None]:
        """The case `plan` measures on `server` begins: its observers are told; what takes its seconds."""
        if self._next is not None:
            (params, repeat), self._next = self._next, None
        else:
            params = self.params_of(plan) if self.params_of is not None else {}
            repeat = self._repeats.get(case_key(params), 0)
        self._start(params, repeat, None if server is None else server.kind, None if server is None else running_version(server))
        return self._second

    def monitoring(self, sampler: Sampler | None) -> None:
        """The current case's server is sampled by `sampler`: its samples are told with the seconds."""
        self._sampler = sampler

    def measured(self, result: dict[str, Any]) -> None:
        """The run's result is in: the seconds not told yet are told from its timeline (a run on
        agents or over several engine processes tells them all here)."""
        for second in result.get("timeline", [])[self._told_seconds :]:
            self._second(second)

    def ended(self, record: CaseRecord, run_id: int | None = None) -> None:
        """The case's record, as stored in `run_id`; a case that never ran (the server did not
        start, the engine refused the plan) is told as begun here."""
        if run_id is not None:
            self.run_id = run_id
        case = self._case
        if case is None or case.key != record.key or case.repeat != record.repeat:
            kind = record.params.get("server")
            case = self._start(record.params, record.repeat, kind if isinstance(kind, str) else None, record.server_version)
        case = replace(case, run_id=self.run_id)
        for observer in self.observers:
            observer.case_ended(case, record)
        self._case = None
        self._ended += 1

    def _start(self, params: dict[str, Any], repeat: int, kind: str | None, version: str | None) -> Case:
        key = case_key(params)
        self._repeats[key] = repeat + 1
        self._told_seconds = self._told_samples = 0
        self._sampler = None
        self._case = Case(
            self.command, self.run_id, params, key, repeat, self._ended, self.planned, kind, version,
            time.time_ns() // 1_000_000,
        )
        for observer in self.observers:
            observer.case_started(self._case)
        return self._case

    def _second(self, second: engine.Second) -> None:
        assert self._case is not None
        self._told_seconds += 1
        row = {name: value for name, value in second.items() if name != "histogram"}
        for observer in self.observers:
            observer.second(self._case, row)
        points = [] if self._sampler is None else self._sampler.points(self._told_samples)
        self._told_samples += len(points)
        for point in map(asdict, points):
            for observer in self.observers:
                observer.server_sample(self._case, point)

    def __enter__(self) -> Self:
        self._token = _current.set(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._token is not None:
            _current.reset(self._token)
        for observer in self.observers:
            observer.close()

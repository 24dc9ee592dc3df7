"""Run a suite's blocks: start each server configuration once (and again after every
`restart_every` repeats), measure its cases, and hand every record over the moment it ends.

Cases already stored (a resumed run) are skipped; a capacity search resumes from the probes it
stored. A server that cannot start leaves one error record per case it would have served, and the
suite goes on. Each capacity probe measures a server that answers: one the previous level broke
is started again (and warmed up again) first, and its breaking probe says so
(`qos.server_answered_after`)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Self

from gauntlet import engine
from gauntlet.analysis import capacity, qos
from gauntlet.errors import GauntletError
from gauntlet.lab.case import measure, now_ms
from gauntlet.lab.observers import running_version
from gauntlet.lab.warm_up import WarmUp, WarmUpInterrupted
from gauntlet.model.case import Case
from gauntlet.model.loadfile import LEVEL_NAMES, LoadFile
from gauntlet.model.record import CaseRecord, case_key
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.registry import availability, start_server
from gauntlet.suite.expand import Block, expand
from gauntlet.suite.load import LoadedSuite, parse_suite


class Interrupted(Exception):
    """Ctrl-C during a case: the suite stops once what was measured is handed over."""


class Sink(Protocol):
    """Where records go (the store) and who is told about progress (the terminal)."""

    def case_started(self, params: dict[str, Any], repeat: int) -> None: ...
    def progress(self, progress: engine.Progress) -> None: ...
    def case_done(self, record: CaseRecord) -> None: ...


class _NotStored(Exception):
    """A capacity probe the store does not hold yet."""


def probe_params(case: Case, level: int) -> dict[str, Any]:
    """A capacity probe's params: the case's, with the level probed (users, or peak users/s)."""
    assert case.sessions is not None
    return case.params | {case.sessions.load.level_name: level}


def search_key(params: dict[str, Any]) -> str:
    """The key of the capacity search a probe with these params belongs to (the level left out)."""
    return case_key({name: value for name, value in params.items() if name not in LEVEL_NAMES})


def qos_summary(load: LoadFile, result: dict[str, Any]) -> dict[str, Any]:
    """The load file's QoS verdict on a sessions result, as stored with it (`result["qos"]`)."""
    shares = load.qos
    verdict = qos.verdict(result["sessions"], shares.good_share, shares.good_or_tolerable_share)
    pages = {
        page.name: {
            "good_share": page.good_share, "good_or_tolerable_share": page.good_or_tolerable_share, "valid": page.valid,
            "invalid": page.invalid,
        }
        for page in verdict.pages
    }
    return {"valid": verdict.valid, "pages": pages}


@dataclass
class Agenda:
    """What a suite run has to measure: its blocks, the repeats, when to restart, what is stored already."""

    blocks: list[Block]
    repeats: int = 1
    restart_every: int = 0
    #: Cases already stored, by (key, repeat), with their QoS validity when they had sessions.
    done: dict[tuple[str, int], bool | None] = field(default_factory=dict)

    def search_capacity(self, case: Case, probe: Any) -> capacity.Capacity:
        sessions = case.sessions
        assert sessions is not None and sessions.capacity_start is not None
        return capacity.search(probe, sessions.capacity_start, sessions.capacity_max_probes, capacity.ceiling(sessions.load))

    def stored_verdict(self, case: Case, repeat: int, users: int) -> bool:
        key = (case_key(probe_params(case, users)), repeat)
        if key not in self.done:
            raise _NotStored
        return bool(self.done[key])

    def is_done(self, case: Case, repeat: int) -> bool:
        if case.sessions is None or case.sessions.capacity_start is None:
            return (case_key(case.params), repeat) in self.done
        try:
            self.search_capacity(case, lambda users: self.stored_verdict(case, repeat, users))
        except _NotStored:
            return False
        return True

    def searches_not_ended(self) -> set[tuple[str, int]]:
        """The capacity searches a resume would go on with, by (search_key, repeat)."""
        return {
            (search_key(case.params), repeat)
            for block in self.blocks for case in block.cases
            if case.sessions is not None and case.sessions.capacity_start is not None
            for repeat in range(self.repeats) if not self.is_done(case, repeat)
        }

    def pending(self, block: Block, repeat: int) -> list[Case]:
        return [case for case in block.cases if not self.is_done(case, repeat)]

    def departures(self) -> list[str]:
        """What this variant changes in its load files that changes what a capacity means: think
        times scaled (a quick variant trades them for length), one line per scale."""
        scales = sorted({c.sessions.load.think_scale for b in self.blocks for c in b.cases if c.sessions is not None} - {1.0})
        return [
            f"think times x{scale:g} of the load files' (think_scale): capacities are in users of this shorter think time"
            for scale in scales
        ]

    def total(self) -> int:
        """Cases still to measure (a capacity search counts as one)."""
        return sum(len(self.pending(block, r)) for block in self.blocks for r in range(self.repeats))


#: How long a server has, after a capacity probe it failed, to answer one request: longer, and the
#: next probe would measure a server the last one broke.
ANSWER_AFTER_PROBE_S = 10.0


class _SearchStopped(Exception):
    """A capacity search cannot go on: its server stopped answering and could not start again."""


class _BlockServer:
    """A block's server, started for its first case and again for the next case after one of its
    processes exited (the case it killed is stored as an error), or for the next capacity probe
    after it stopped answering; stopped when the block ends."""

    def __init__(self, block: Block) -> None:
        self._block = block
        self._running: ServerInstance | str | None = None

    def current(self) -> ServerInstance | str:
        """The running server, or why it could not start."""
        if isinstance(self._running, ServerInstance) and self._running.exits():
            self.stop()
        if self._running is None:
            try:
                self._running = start_server(self._block.server)
            except GauntletError as err:
                self._running = str(err)
        return self._running

    def answering(self) -> ServerInstance | str:
        """`current()`, started again first if it no longer answers."""
        if isinstance(self._running, ServerInstance) and not self._running.answers(ANSWER_AFTER_PROBE_S):
            self.stop()
        return self.current()

    def stop(self) -> None:
        running, self._running = self._running, None
        if isinstance(running, ServerInstance):
            running.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SuiteRunner:
    def __init__(self, agenda: Agenda, sink: Sink, run_plan: engine.Runner = engine.run) -> None:
        self._agenda = agenda
        self._sink = sink
        self._run_plan = run_plan

    def run(self) -> None:
        """Raises Interrupted after a case cut short by Ctrl-C (its partial record is handed over first)."""
        agenda = self._agenda
        for block in agenda.blocks:
            version = availability(block.server.kind).version
            repeat = 0
            while True:
                # A resumed run starts no server for repeats that are already stored.
                repeat = next((r for r in range(repeat, agenda.repeats) if agenda.pending(block, r)), agenda.repeats)
                if repeat >= agenda.repeats:
                    break
                with _BlockServer(block) as server:
                    while True:
                        for case in agenda.pending(block, repeat):
                            self._case(case, repeat, server, version)
                        repeat += 1
                        if repeat >= agenda.repeats or (agenda.restart_every and repeat % agenda.restart_every == 0):
                            break

    def _case(self, case: Case, repeat: int, block_server: _BlockServer, version: str | None) -> None:
        server = block_server.current()
        if isinstance(server, str):
            self._failed(case, repeat, version, server)
        elif case.sessions is not None and case.sessions.capacity_start is not None:
            warm_up = WarmUp(case, probe_params(case, case.sessions.capacity_start))
            try:
                self._agenda.search_capacity(case, lambda users: self._probe(case, repeat, block_server, version, users, warm_up))
            except _SearchStopped as stopped:
                self._failed(case, repeat, version, str(stopped))
        else:
            self._measure(case, case.params, repeat, server, version)

    def _failed(self, case: Case, repeat: int, version: str | None, error: str) -> None:
        """An error record for a case its server could not serve."""
        self._sink.case_started(case.params, repeat)
        started = now_ms()
        self._sink.case_done(CaseRecord(case.params, repeat, version, error=error, started_unix_ms=started, ended_unix_ms=started))

    def _probe(
        self, case: Case, repeat: int, block_server: _BlockServer, version: str | None, users: int, warm_up: WarmUp
    ) -> bool:
        """One level of a capacity search, on a server that answers: one the last level broke is
        started again (and warmed up again) first; one that cannot start ends the search."""
        with contextlib.suppress(_NotStored):
            return self._agenda.stored_verdict(case, repeat, users)
        server = block_server.answering()
        if isinstance(server, str):
            raise _SearchStopped(f"the capacity search stopped before {users} users: {server}")
        try:
            warmed = warm_up.once(server)
        except WarmUpInterrupted:
            raise Interrupted from None
        result = self._measure(case, probe_params(case, users), repeat, server, version, warmed)
        if result is not None and result["qos"].get("server_answered_after") is False:
            block_server.stop()  # already found dead: the next level starts one without asking again
        return result is not None and bool(result["qos"]["valid"])

    def _measure(
        self, case: Case, params: dict[str, Any], repeat: int, server: ServerInstance, version: str | None,
        warm_up: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        self._sink.case_started(params, repeat)
        base_url = server.url.rstrip("/")
        if case.plan is not None:
            plan = case.plan.at(base_url + case.path)
        else:
            assert case.sessions is not None
            plan = case.sessions.plan(params, base_url + "/", server.https_url)
        measured = measure(
            plan, server, params, server_version=running_version(server) or version, repeat=repeat, run_plan=self._run_plan,
            on_progress=self._sink.progress,
        )
        record = measured.record
        if case.sessions is not None and record.result is not None:
            record.result["qos"] = qos_summary(case.sessions.load, record.result)
            if warm_up is not None:
                record.result["warm_up"] = warm_up
            if not record.result["qos"]["valid"]:
                record.result["qos"]["server_answered_after"] = server.answers(ANSWER_AFTER_PROBE_S)
        self._sink.case_done(record)
        if measured.interrupted:
            raise Interrupted
        return record.result


def select_servers(suite_kinds: list[str], asked: list[str] | None) -> tuple[list[str], list[str]]:
    """The kinds to run (those asked for, by default all the suite's, that are installed) and one
    line for each one skipped, saying how to install it."""
    if asked:
        unknown = [kind for kind in asked if kind not in suite_kinds]
        if unknown:
            raise GauntletError(
                f"the suite has no server {', '.join(unknown)}", f"--servers takes some of {', '.join(suite_kinds)}"
            )
    kinds, skipped = [], []
    for kind in asked or suite_kinds:
        found = availability(kind)
        if found.available:
            kinds.append(kind)
        else:
            skipped.append(f"{kind} skipped: {found.reason}")
    return kinds, skipped


@dataclass
class Prepared:
    """A suite ready to run: what it expanded to on the installed servers, and the options to store
    with the run so that a resume rebuilds the same agenda."""

    loaded: LoadedSuite
    agenda: Agenda
    kinds: list[str]
    skipped: list[str]
    options: dict[str, Any]


def prepare(loaded: LoadedSuite, options: dict[str, Any], done: dict[tuple[str, int], bool | None]) -> Prepared:
    """`options`: servers (kinds asked for, or None), repeats, restart_every, as `new_options` makes them."""
    suite_kinds = [entry.kind for entry in loaded.suite.servers]
    kinds, skipped = select_servers(suite_kinds, options["servers"])
    if not kinds:
        raise GauntletError("none of the suite's servers is installed", "Install one (see the lines above)")
    blocks = expand(loaded.suite, kinds, loaded.path.parent)
    return Prepared(loaded, Agenda(blocks, options["repeats"], options["restart_every"], done), kinds, skipped, options)


def new_options(
    loaded: LoadedSuite, servers: list[str] | None, repeats: int | None, restart_between: bool
) -> dict[str, Any]:
    return {
        "suite_path": str(loaded.path.resolve()),
        "quick": loaded.quick,
        "full": loaded.full,
        "servers": servers,
        "repeats": repeats or loaded.suite.repeats,
        "restart_every": 1 if restart_between else loaded.suite.restart_every,
    }


def resumed(suite_text: str, options: dict[str, Any], done: dict[tuple[str, int], bool | None]) -> Prepared:
    """The agenda of a stored run, from the suite text and options it started with, minus what is done."""
    return prepare(_as_run(suite_text, options), options, done)


def _as_run(suite_text: str, options: dict[str, Any]) -> LoadedSuite:
    """A stored run's suite, the variant it ran."""
    return parse_suite(suite_text, Path(options["suite_path"]), options["quick"], options.get("full", False))


def searches_not_ended(suite_text: str, options: dict[str, Any], done: dict[tuple[str, int], bool | None]) -> set[tuple[str, int]]:
    """A stored run's capacity searches that had not ended when it stopped, by (search_key,
    repeat): whether its servers are installed here or not."""
    loaded = _as_run(suite_text, options)
    kinds = options["servers"] or [entry.kind for entry in loaded.suite.servers]
    return Agenda(expand(loaded.suite, kinds, loaded.path.parent), options["repeats"], done=done).searches_not_ended()

"""`--live`: the lab's observer (lab.observers.Observer) that keeps a LiveState and serves it. The
server starts with the observer (its address printed at once) and stops when the command's feed
closes it; `close` may come twice (the command's own cleanup too), the second does nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gauntlet import __version__
from gauntlet.live.finished import finished_tables
from gauntlet.live.server import LiveServer
from gauntlet.live.state import LiveState

if TYPE_CHECKING:
    from gauntlet import engine
    from gauntlet.lab.observers import Case
    from gauntlet.model.record import CaseRecord


class LiveObserver:
    def __init__(self, command: str, address: str) -> None:
        self.state = LiveState(command, finished_tables, __version__)
        self._server: LiveServer | None = LiveServer(self.state, address).__enter__()

    @property
    def url(self) -> str:
        assert self._server is not None
        return self._server.url

    def case_started(self, case: Case) -> None:
        self.state.begin(case.run_id, case.planned)
        duration_s = case.params.get("duration_s")
        planned_s = None if duration_s is None else float(duration_s) + float(case.params.get("warmup_s") or 0)
        self.state.case_started(case.params, case.repeat, case.server_kind, case.server_version, planned_s)

    def second(self, case: Case, second: engine.Second) -> None:
        self.state.second(second)

    def server_sample(self, case: Case, point: dict[str, Any]) -> None:
        self.state.server_sample(point)

    def case_ended(self, case: Case, record: CaseRecord) -> None:
        self.state.begin(case.run_id, case.planned)
        self.state.case_done(record)

    def close(self) -> None:
        self.state.end("ended")
        server, self._server = self._server, None
        if server is not None:
            server.__exit__(None, None, None)

"""The restartable target of `run` and `sweep`: every server it started is stopped, whatever happens."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gauntlet import engine
from gauntlet.lab.measure import Repeats, Settings, Target, measure_repeats
from gauntlet.plan import Plan
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.process import leftovers
from tests.helpers.builtin_stats import server_stats


def test_a_restart_stops_the_old_server_and_the_end_stops_the_new_one() -> None:
    started: list[tuple[ServerInstance, list[int]]] = []

    def announce(server: ServerInstance) -> None:
        started.append((server, server.pids()))

    with Target(start=start_builtin, path="/webtest.html", announce=announce) as target:
        first_url = target.url
        target.restart()
        assert not leftovers(started[0][1], started[0][0].port)
        assert target.url != first_url and target.url.endswith("/webtest.html")
    assert len(started) == 2 and not leftovers(started[1][1], started[1][0].port)


def test_a_ctrl_c_while_announcing_the_server_still_stops_it() -> None:
    seen: list[tuple[ServerInstance, list[int]]] = []

    def interrupted(server: ServerInstance) -> None:
        seen.append((server, server.pids()))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), Target(start=start_builtin, announce=interrupted):
        pytest.fail("the block must not run")
    server, pids = seen[0]
    assert not leftovers(pids, server.port)


def test_a_warm_up_runs_on_each_server_a_restart_starts() -> None:
    """--restart-between with --warmup-requests: warm-up then measurement on the first server, the same
    on the second; each server's own counter saw exactly both."""
    runs: list[tuple[str, int, int]] = []
    counted: list[int] = []

    def recording(plan: engine.Plan, on_progress: Callable[[engine.Progress], None] | None) -> engine.RunOutcome:
        outcome = engine.run(plan)
        runs.append((plan["url"], plan["requests"], outcome.result["responses"]))
        return outcome

    def measured(repeats: Repeats) -> None:
        assert target.server is not None
        counted.append(server_stats(target.server)["requests"])

    plan = Plan(url="", connections=2, threads=1, requests=300)
    settings = Settings(repeats=2, restart_between=True, warmup_requests=200)
    with Target(start=start_builtin, path="/webtest.html") as target:
        measure_repeats(plan, target, settings, on_measured=measured, run_plan=recording)
    (first, *_), (second, *_) = runs[0], runs[2]
    assert first != second, "the restart started a new server"
    assert runs == [(first, 200, 200), (first, 300, 300), (second, 200, 200), (second, 300, 300)]
    assert counted == [500, 500]

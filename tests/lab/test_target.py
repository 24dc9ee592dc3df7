"""The restartable target of `run` and `sweep`: every server it started is stopped, whatever happens."""

from __future__ import annotations

import pytest

from gauntlet.lab.measure import Target
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.process import leftovers


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

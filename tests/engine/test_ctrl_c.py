"""Ctrl-C at any moment of `engine.run` cancels the run and returns what was measured, even when it
comes as the engine starts, before the wait that handles it (where it once escaped with the engine
still running and the partial result lost). Against the built-in server in its own process."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest

from gauntlet import _engine, engine
from gauntlet.servers.base import ServerInstance
from tests.helpers.builtin_stats import server_stats

#: How long the requests go out before the Ctrl-C.
LOADED_S = 0.3
ENGINE_RUN = _engine.Run


class CtrlCAsItStarts:
    """The engine's run handle, with a Ctrl-C as its start() returns, once requests have gone out."""

    def __init__(self, plan_json: str) -> None:
        self._run = ENGINE_RUN(plan_json)

    def start(self) -> None:
        self._run.start()
        time.sleep(LOADED_S)
        signal.raise_signal(signal.SIGINT)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._run, name)


def test_a_ctrl_c_as_the_engine_starts_cancels_the_run_and_keeps_its_result(
    builtin_server: ServerInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine._engine, "Run", CtrlCAsItStarts)
    plan = {"url": f"{builtin_server.url}webtest.html", "connections": 2, "threads": 1, "duration_us": 30_000_000}
    began = time.monotonic()
    try:
        outcome = engine.run(plan, on_measuring=lambda began_us, counted: None)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped engine.run: the engine was left running and its result lost")
    assert time.monotonic() - began < 2.0, "cancelled, not run for its 30 s"
    result = outcome.result
    assert outcome.interrupted and result["partial"] and result["stop_reason"] == "cancelled"
    assert result["responses"] > 0
    # The engine has stopped: the server sees no request after the result (its stats route aside).
    seen = server_stats(builtin_server)["requests"]
    time.sleep(0.2)
    assert server_stats(builtin_server)["requests"] == seen >= result["responses"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Ctrl-C is handled as before the run"

"""Real cases measured once per module against the built-in server, for the store's round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from gauntlet.model.record import CaseRecord
from gauntlet.servers.builtin import start_builtin
from tests.conftest import Started
from tests.helpers.measured import SLOW_PAGE_LOAD, load_case, sessions_case


@pytest.fixture(scope="module")
def measured_cases(tmp_path_factory: pytest.TempPathFactory) -> list[CaseRecord]:
    """Keep-alive and not, a constant rate, HTTPS, sessions: every part of a result the store flattens."""
    started = Started()
    try:
        plain = started.add(start_builtin(threads=2))
        tls = started.add(start_builtin(threads=2, tls=True))
        load = tmp_path_factory.mktemp("load") / "slow.yaml"
        load.write_text(SLOW_PAGE_LOAD)
        return [
            load_case(plain, {"path": "/webtest.html", "keepalive": True, "connections": 4}, measure_s=1.2),
            load_case(plain, {"path": "/image_small.gif", "keepalive": False, "connections": 2}),
            load_case(plain, {"path": "/webtest.html", "model": "rate", "rate_per_s": 2000, "connections": 4}),
            load_case(tls, {"path": "/webtest.html", "connections": 2}),
            sessions_case(plain, load, 2, {}),
        ]
    finally:
        started.stop_all_and_check()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "results.db"

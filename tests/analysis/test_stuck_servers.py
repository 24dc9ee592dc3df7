"""A run that ended no request is an error with a label that says where its requests stuck: two
tiny servers on loopback, one that never accepts a connection (its listen backlog filled by the
test before the run) and one that accepts every connection and never answers. Each run is stored
as an error case with its own label and a 100 % failed share, and its run is not `complete`."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gauntlet.analysis.bottleneck import LISTEN_BACKLOG_FULL, SERVER_STALLED
from gauntlet.report.points import grid_points
from gauntlet.report.views import cases_table
from gauntlet.servers.process import LOOPBACK
from gauntlet.store import Store
from tests.helpers.cli_process import run_cli

CONNECTIONS = 10


@pytest.fixture
def never_accepting() -> Iterator[str]:
    """A listener with a backlog of 1 that nobody accept()s, its queue already full: every SYN
    after that is dropped, so every connect the engine makes stays pending."""
    with socket.socket() as listener:
        listener.bind((LOOPBACK, 0))
        listener.listen(0)
        address = listener.getsockname()
        # Linux queues backlog + 1 connections; two more are kept in SYN-SENT forever.
        fillers = [socket.socket() for _ in range(2)]
        for filler in fillers:
            filler.setblocking(False)
            filler.connect_ex(address)
        try:
            yield f"http://{LOOPBACK}:{address[1]}/"
        finally:
            for filler in fillers:
                filler.close()


@pytest.fixture
def never_answering() -> Iterator[str]:
    """A listener that accepts every connection, reads nothing and answers nothing."""
    held: list[socket.socket] = []
    with socket.socket() as listener:
        listener.bind((LOOPBACK, 0))
        listener.listen(128)
        listener.settimeout(0.05)
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except TimeoutError:
                    continue

        acceptor = threading.Thread(target=accept, daemon=True)
        acceptor.start()
        try:
            yield f"http://{LOOPBACK}:{listener.getsockname()[1]}/"
        finally:
            stop.set()
            acceptor.join()
            for conn in held:
                conn.close()


def stored(db: Path) -> tuple[str, dict[str, Any]]:
    """The run's status and its one case: status, error, labels and failed share."""
    with sqlite3.connect(db) as conn:
        (run_status,) = conn.execute("SELECT status FROM runs").fetchone()
        status, error, labels, failed_share = conn.execute(
            "SELECT status, error, labels_json, failed_share FROM cases JOIN measurements USING (case_id)"
        ).fetchone()
    return run_status, {"status": status, "error": error, "labels": json.loads(labels), "failed_share": failed_share}


@pytest.mark.parametrize(
    ("server", "label", "stage"),
    [("never_accepting", LISTEN_BACKLOG_FULL, "connecting"), ("never_answering", SERVER_STALLED, "awaiting_response")],
)
def test_a_server_that_ends_no_request_is_an_error_labelled_where_the_requests_stuck(
    server: str, label: str, stage: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue(server)
    db, out = tmp_path / "r.db", tmp_path / "r.json"
    done = run_cli("run", url, "-c", str(CONNECTIONS), "-t", "1", "-d", "1s", "--db", db, "--json", out)
    result = json.loads(out.read_text())
    assert result["requests"] == 0 and result["unanswered"][stage]["count"] == CONNECTIONS, result["unanswered"]
    assert result["bottleneck"]["labels"] == [label] and result["bottleneck"]["failed_share"] == 1.0
    run_status, case = stored(db)
    assert case["status"] == "error" and case["labels"] == [label], case
    assert case["error"].startswith(f"{label}: no request ended"), case
    assert case["failed_share"] == 1.0 and run_status == "failed"
    assert done.code == 1 and f"{label}: no request ended" in done.stderr, done.stderr
    with Store.open_read_only(db) as store:
        table = cases_table(grid_points(store.cases([store.latest_run_id()])))
    shown = dict(zip((column.name for column in table.columns), table.rows[0], strict=True))
    assert (shown["failed"], shown["req/s"], shown["bottleneck"]) == ("100.0%", "-", label), shown

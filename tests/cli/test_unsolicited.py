"""`gauntlet run` against a server that answers every request twice (the built-in server's
`again_ms=0` fault): each answer counted once, the second shown in the Outcomes table as
unsolicited, stored as its own figures, and filled in by migration 0009 for cases stored before."""

from __future__ import annotations

import json
import sqlite3
from importlib import resources
from pathlib import Path

from gauntlet import schema
from gauntlet.servers.base import ServerInstance
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import run_cli

REQUESTS = 200


def test_a_server_answering_twice_shows_unsolicited_answers(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out, db = tmp_path / "result.json", tmp_path / "results.db"
    url = f"{builtin_server.url}webtest.html?again_ms=0"
    done = run_cli("run", url, "-n", str(REQUESTS), "-c", "2", "-t", "1", "--json", out, "--db", db)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    properties = schema.run_result()["properties"]
    assert properties["unsolicited"]["type"] == properties["unsolicited_bytes"]["type"] == "integer"
    assert (result["responses"], result["errors_total"], result["unsolicited"]) == (REQUESTS, 0, REQUESTS)
    assert server_stats(builtin_server)["requests"] == REQUESTS
    rows = [line for line in done.stdout.splitlines() if "unsolicited" in line]
    assert len(rows) == 1 and rows[0].split()[-1] == str(REQUESTS), done.stdout
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT unsolicited, unsolicited_bytes FROM measurements").fetchall()
        assert stored == [(REQUESTS, result["unsolicited_bytes"])]
        # A case stored before migration 0009: its columns filled in from its result JSON.
        conn.execute("UPDATE measurements SET unsolicited = NULL, unsolicited_bytes = NULL")
        sql = resources.files("gauntlet.store").joinpath("migrations", "0009_unsolicited.sql").read_text()
        for statement in sql.split(";"):
            if statement.strip().startswith("UPDATE"):
                conn.execute(statement)
        assert conn.execute("SELECT unsolicited, unsolicited_bytes FROM measurements").fetchall() == stored

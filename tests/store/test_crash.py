"""SIGKILL at random moments while cases are added: the file always opens, passes SQLite's integrity
check, and holds every case whose add_case had returned, whole."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from gauntlet.model.record import CaseRecord
from gauntlet.store import Store

REPO = Path(__file__).parents[2]
KILLS = 8
SEED = int(time.time())


def add_cases_until_killed(db_path: Path, result_path: Path, rng: random.Random) -> list[tuple[int, int]]:
    """Start the child, let it store a random number of cases, then SIGKILL it at a random moment;
    (run, index) of every case it said it had stored."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.store.add_cases_until_killed", str(db_path), str(result_path)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    said = []
    try:
        assert child.stdout is not None
        for _ in range(rng.randint(1, 20)):
            said.append(child.stdout.readline())
            assert said[-1], f"the child ended early: {child.communicate(timeout=10)[1]}"
        time.sleep(rng.uniform(0, 0.02))
    finally:
        child.send_signal(signal.SIGKILL)
        rest, _ = child.communicate(timeout=10)
    assert child.returncode == -signal.SIGKILL
    return [(int(run), int(index)) for _, run, index in (line.split() for line in [*said, *rest.splitlines()])]


def test_sigkill_never_loses_a_stored_case(tmp_path: Path, measured_cases: list[CaseRecord]) -> None:
    print(f"random seed {SEED}")
    rng = random.Random(SEED)
    record = measured_cases[0]
    assert record.result is not None
    result_path = tmp_path / "result.json"
    result_path.write_text(json.dumps(record.result))
    db_path = tmp_path / "results.db"
    confirmed: list[tuple[int, int]] = []
    for _ in range(KILLS):
        confirmed += add_cases_until_killed(db_path, result_path, rng)
        with sqlite3.connect(db_path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        with Store.open(db_path, create=False) as store:
            runs = store.runs()
            cases = store.cases([run.run_id for run in runs])
        stored = {(case.run_id, case.params["connections"]): case for case in cases}
        assert set(confirmed) <= set(stored)
        # Whatever is there is whole, including the one case whose commit beat the kill but not its print.
        assert all(case.result == record.result for case in stored.values())
        assert len(stored) - len(confirmed) <= len(runs)
    assert len(confirmed) >= KILLS


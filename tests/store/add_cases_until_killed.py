"""Child process of test_crash.py: adds cases to a new run in a loop, saying on stdout which case
each returned add stored, until it is killed (or, bounded, after MAX_CASES or MAX_SECONDS)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from gauntlet.model.record import CaseRecord
from gauntlet.store import Store

MAX_CASES = 5_000
MAX_SECONDS = 30


def main(db_path: Path, result_path: Path) -> None:
    result = json.loads(result_path.read_text())
    deadline = time.monotonic() + MAX_SECONDS
    with Store.open(db_path) as store:
        run_id = store.begin_run(suite="crash", suite_text=None, options={}, environment={}, planned_cases=MAX_CASES)
        for index in range(MAX_CASES):
            if time.monotonic() > deadline:
                break
            store.add_case(run_id, CaseRecord(params={"server": "builtin", "connections": index}, result=result))
            print(f"stored {run_id} {index}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

"""A bug that stops a suite mid-run (the thesis run of 2026-11-28 died on a /proc race) ends in one
line that names the error and where it was raised, after the summary and the report of what was
measured; `--resume` measures the rest. The CLI runs in a subprocess on the built-in server, with
one fault put in: the suite's second case raises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gauntlet.store import Store
from tests.helpers.cli_process import run_cli

SUITE = """
name: crash-check
servers: [builtin]
groups:
  - name: pages
    path: [/webtest.html]
    connections: [1, 2, 4]
    duration: 500ms
    warmup: 100ms
"""
#: The CLI with SuiteRunner's second case raising what the thesis run met (or ERROR, when given).
SECOND_CASE_RAISES = """
import sys
from gauntlet.errors import GauntletError
from gauntlet.lab import suite
ERROR = None
measured_once = suite.SuiteRunner._case
calls = []
def _case(self, *args, **kwargs):
    calls.append(None)
    if len(calls) == 2:
        raise ERROR or FileNotFoundError(2, "No such file or directory", "/proc/5496/task")
    return measured_once(self, *args, **kwargs)
suite.SuiteRunner._case = _case
from gauntlet.cli import main
main(sys.argv[1:])
"""


def run_suite_whose_second_case_raises(tmp_path: Path, error: str = "None") -> subprocess.CompletedProcess[str]:
    suite_file = tmp_path / "crash.yaml"
    suite_file.write_text(SUITE)
    code = SECOND_CASE_RAISES.replace("ERROR = None", f"ERROR = {error}")
    return subprocess.run(
        [sys.executable, "-c", code, "suite", "run", str(suite_file), "--db", str(tmp_path / "runs.db"), "-o", str(tmp_path / "report.html")],
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_a_bug_mid_suite_is_one_line_after_the_report_and_the_run_resumes(tmp_path: Path) -> None:
    db, report = tmp_path / "runs.db", tmp_path / "report.html"
    done = run_suite_whose_second_case_raises(tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("gauntlet: error:")]
    assert line.startswith(
        "gauntlet: error: the suite stopped on an unexpected error: "
        "FileNotFoundError: [Errno 2] No such file or directory: '/proc/5496/task' (<string>:"
    ), line
    assert f"The 1 finished cases are in the summary and the report; measure the rest with: gauntlet suite run --resume 1 --db {db}" in line
    assert report.exists() and "Cases" in done.stdout
    with Store.open_read_only(db) as store:
        assert store.run(1).status == "failed" and len(store.cases([1])) == 1
    resumed = run_cli("suite", "run", "--resume", "1", "--db", db, "-o", report, timeout_s=120)
    assert resumed.code == 0, resumed.stderr
    with Store.open_read_only(db) as store:
        assert store.run(1).status == "complete"
        assert sorted(case.params["connections"] for case in store.cases([1])) == [1, 2, 4]


def test_a_stated_error_mid_suite_keeps_its_words_and_is_not_called_a_bug(tmp_path: Path) -> None:
    done = run_suite_whose_second_case_raises(tmp_path, 'GauntletError("the disk is full", "Free some space")')
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "a bug in Gauntlet" not in done.stderr
    assert "gauntlet: error: the disk is full. Free some space" in done.stderr.splitlines()
    assert (tmp_path / "report.html").exists()

"""Watching a command from files (docs/watching.md): `--out jsonl:FILE` writes each case's seconds
as they come, the same seconds the stored result's timeline has; `gauntlet export RUN --hgrm DIR`
writes each case's latency histogram as HdrHistogram's percentile text, read back here by a parser
of its own and checked against the stored result's figures."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

import pytest

from gauntlet.servers.base import ServerInstance
from gauntlet.store import Store
from tests.e2e.test_suite_options import suite_file
from tests.helpers.cli_process import Running, run_cli

TIMELINE_FIELDS = ("second", "span_us", "requests", "responses", "errors", "bytes_in", "p50_us", "p99_us", "max_us")


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored_cases(db: Path) -> list[Any]:
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
        return store.cases([run.run_id])


def check_case_lines(lines: list[dict[str, Any]], case: Any) -> None:
    """A case's lines: its start, one line per second of its stored timeline (the same figures, in
    order), its end with the stored status and labels; the seconds add up to the result's counts."""
    mine = [line for line in lines if line["case"] == case.key and line["repeat"] == case.repeat]
    assert [line["event"] for line in mine] == ["case_start"] + ["second"] * len(case.result["timeline"]) + ["case_end"]
    seconds = [line for line in mine if line["event"] == "second"]
    for line, stored in zip(seconds, case.result["timeline"], strict=True):
        assert {name: line[name] for name in TIMELINE_FIELDS} == {name: stored[name] for name in TIMELINE_FIELDS}
    for total, per_second in (("requests", "requests"), ("responses", "responses"), ("errors_total", "errors")):
        assert sum(line[per_second] for line in seconds) == case.result[total]
    end = mine[-1]
    assert (end["status"], end["labels"], end["run_id"]) == (case.status, case.labels, case.run_id)
    assert end["result"]["responses"] == case.result["responses"]


def test_out_jsonl_writes_each_second_while_the_run_goes(tmp_path: Path) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "watch.jsonl"
    with Running("run", "-d", "4s", "-c", "2", "-t", "1", "--db", db, "--out", f"jsonl:{out}") as running:
        deadline = time.monotonic() + 30
        while not (out.exists() and '"event":"second"' in out.read_text()):
            assert running.proc.poll() is None, "the run ended before a second was written"
            assert time.monotonic() < deadline, "no second written within 30 s"
            time.sleep(0.05)
        seen_unix_ms = time.time() * 1000
        done = running.wait(60)
    assert done.code == 0, done.stderr
    (case,) = stored_cases(db)
    lines = lines_of(out)
    # The first second was there (written and flushed) while the load still had seconds to run,
    # not at the case's end.
    assert seen_unix_ms < lines[-1]["ended_unix_ms"] - 1500
    assert len(case.result["timeline"]) >= 4
    check_case_lines(lines, case)
    start = lines[0]
    assert (start["command"], start["server"], start["params"], start["index"]) == ("run", "builtin", case.params, 0)


def test_out_jsonl_of_a_sweep_has_every_step_and_appends(tmp_path: Path) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "watch.jsonl"
    out.write_text('{"earlier": true}\n')
    done = run_cli("sweep", "concurrency", "--levels", "1,2", "-d", "2s", "-t", "1", "--db", db, "--out", f"jsonl:{out}",
                   timeout_s=90)
    assert done.code == 0, done.stderr
    earlier, *lines = lines_of(out)
    assert earlier == {"earlier": True}
    cases = stored_cases(db)
    assert len(cases) == 2
    for index, case in enumerate(cases):
        check_case_lines(lines, case)
        start = next(line for line in lines if line["event"] == "case_start" and line["case"] == case.key)
        assert (start["index"], start["planned"]) == (index, 2)


FAILING_SESSIONS = """\
sessions:
  - name: failing
    pages: [{name: broken, path: '/hello?status=500'}]
users: 2
warm_up: 100ms
measure: 2s
"""


def test_out_jsonl_of_a_suite_knows_its_run_from_the_first_case(tmp_path: Path) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "watch.jsonl"
    done = run_cli("suite", "run", suite_file(tmp_path), "--db", db, "-o", tmp_path / "report.html", "--out", f"jsonl:{out}", timeout_s=300)
    assert done.code == 0, done.stderr
    lines = lines_of(out)
    cases = stored_cases(db)
    assert len(cases) == 2
    for case in cases:
        check_case_lines(lines, case)
    assert {line["run_id"] for line in lines} == {cases[0].run_id}
    starts = [line for line in lines if line["event"] == "case_start"]
    assert [(s["command"], s["index"], s["planned"], s["params"]["workload"]) for s in starts] == [
        ("suite", 0, 2, "ST-1"), ("suite", 1, 2, "ST-2"),
    ]


def test_out_jsonl_of_capacity_names_each_probe(builtin_server: ServerInstance, tmp_path: Path) -> None:
    db, out, load = tmp_path / "runs.db", tmp_path / "watch.jsonl", tmp_path / "load.yaml"
    load.write_text(FAILING_SESSIONS)
    done = run_cli("capacity", load, builtin_server.url, "--start", "2", "--max-probes", "1", "--db", db,
                   "--out", f"jsonl:{out}", timeout_s=60)
    assert done.code == 0, done.stderr
    (case,) = stored_cases(db)
    lines = lines_of(out)
    check_case_lines(lines, case)
    assert lines[0]["params"] == case.params and case.params["users"] == 2 and case.params["load"] == "load.yaml"
    assert lines[-1]["labels"] == case.labels and "error-bound" in case.labels


@pytest.mark.parametrize("command", [["run", "-n", "10"], ["sweep", "concurrency", "--levels", "1"], ["suite", "run", "quick"]])
@pytest.mark.parametrize("value", ["jsonl", "csv:x.csv", "jsonl:"])
def test_a_bad_out_is_one_line_naming_the_fix(tmp_path: Path, command: list[str], value: str) -> None:
    done = run_cli(*command, "--db", tmp_path / "runs.db", "--out", value, timeout_s=60)
    assert done.code != 0
    assert done.stderr.strip().splitlines() == [f"gauntlet: error: --out {value!r} names no output. Write it as jsonl:FILE (e.g. --out jsonl:run.jsonl)"]
    assert not (tmp_path / "runs.db").exists()


def test_out_jsonl_to_a_missing_directory_is_refused_before_the_load(tmp_path: Path) -> None:
    done = run_cli("run", "-n", "10", "--db", tmp_path / "runs.db", "--out", f"jsonl:{tmp_path / 'no' / 'w.jsonl'}")
    assert done.code != 0 and "Give a file in a writable directory" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "runs.db").exists()


# --- .hgrm: parsed here on its own terms, as the HdrHistogram plotter reads it ---

ROW = re.compile(r"^\s*(\d+\.\d+)\s+(\d\.\d+)\s+(\d+)\s+(\d+\.\d+|inf)\s*$")
FOOTER = {
    "mean": re.compile(r"^#\[Mean\s+=\s+(\S+), StdDeviation\s+=\s+(\S+)\]$"),
    "max": re.compile(r"^#\[Max\s+=\s+(\S+), Total count\s+=\s+(\d+)\]$"),
    "buckets": re.compile(r"^#\[Buckets\s+=\s+(\d+), SubBuckets\s+=\s+(\d+)\]$"),
}


def parse_hgrm(text: str) -> tuple[list[tuple[float, float, int]], dict[str, tuple[str, str]]]:
    """The rows (value ms, percentile 0..1, total count) and the footer's pairs of an .hgrm file."""
    head, blank, *body = text.splitlines()
    assert head.split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"] and blank == ""
    rows, footer = [], {}
    for line in body:
        if (row := ROW.match(line)) is not None:
            value, level, count, inverse = row.groups()
            if float(level) == 1:
                assert inverse == "inf", line
            else:  # from the unrounded level: within what the printed level's 6 decimals leave open
                low, high = (1 / (1 - min(float(level) + d, 1 - 1e-12)) for d in (-5e-7, 5e-7))
                assert low - 0.005 <= float(inverse) <= high + 0.005, line
            rows.append((float(value), float(level), int(count)))
            continue
        name, found = next((n, m) for n, pattern in FOOTER.items() if (m := pattern.match(line)) is not None)
        footer[name] = found.group(1), found.group(2)
    return rows, footer


def test_export_hgrm_writes_each_case_with_the_stored_percentiles(tmp_path: Path) -> None:
    db, directory = tmp_path / "runs.db", tmp_path / "hgrm"
    done = run_cli("sweep", "concurrency", "--levels", "1,4", "-n", "3000", "-t", "1", "--db", db, timeout_s=90)
    assert done.code == 0, done.stderr
    exported = run_cli("export", "1", "--db", db, "--hgrm", directory, timeout_s=60)
    assert exported.code == 0, exported.stderr
    cases = stored_cases(db)
    files = sorted(directory.glob("*.hgrm"))
    assert len(files) == len(cases) == 2
    for case in cases:
        (path,) = [f for f in files if f"connections-{case.params['connections']}_" in f.name]
        rows, footer = parse_hgrm(path.read_text())
        stored = case.result["latency_us"]
        count = stored["count"]
        assert count == case.result["responses"] == 3000
        # The footer: every sample, the max to the µs, mean and deviation to the printed µs.
        assert int(footer["max"][1]) == count and round(float(footer["max"][0]) * 1000) == stored["max"]
        assert abs(float(footer["mean"][0]) * 1000 - stored["mean"]) <= 0.5
        assert abs(float(footer["mean"][1]) * 1000 - stored["stdev"]) <= 0.5
        assert footer["buckets"][1] == "2048"
        # The rows climb to every sample at the max; the median is a row of its own.
        assert [r[2] for r in rows] == sorted(r[2] for r in rows) and rows[-1] == (rows[-1][0], 1.0, count)
        assert round(rows[-1][0] * 1000) == stored["max"] and rows[0][2] >= 1
        (median,) = [r for r in rows if r[1] == 0.5]
        assert round(median[0] * 1000) == stored["p50"]
        # Each stored percentile lies between the rows whose counts bracket it (HdrHistogram's levels
        # fall between 99 % and 99.9 %): above the last row short of its count, at most the first reaching it.
        for quantile, name in ((0.9, "p90"), (0.99, "p99"), (0.999, "p99_9")):
            needed = math.ceil(quantile * count)
            reached = next(i for i, r in enumerate(rows) if r[2] >= needed)
            assert round(rows[reached][0] * 1000) >= stored[name], name
            assert reached == 0 or round(rows[reached - 1][0] * 1000) < stored[name], name


def test_export_hgrm_names_a_directory_it_cannot_make(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert run_cli("run", "-n", "100", "-c", "1", "--db", db, timeout_s=60).code == 0
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = run_cli("export", "1", "--db", db, "--hgrm", blocker / "sub", timeout_s=60)
    assert done.code != 0 and "Give a directory you can write to" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

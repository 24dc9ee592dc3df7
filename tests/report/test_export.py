"""`gauntlet export` (JSON, CSV) and gauntlet.results (DataFrames) hold what the store holds."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import gauntlet.results
from gauntlet.errors import GauntletError
from gauntlet.model.record import CaseRecord
from gauntlet.store import CaseRow, Store
from gauntlet.store.figures import FIGURES
from tests.helpers.cli_process import run_cli


@pytest.fixture(scope="module")
def stored(study_db: tuple[Path, int]) -> list[CaseRow]:
    path, run_id = study_db
    with Store.open(path, create=False) as store:
        return store.cases([run_id])


def test_json_export_holds_runs_cases_and_whole_results(study_db: tuple[Path, int], stored: list[CaseRow], tmp_path: Path) -> None:
    path, run_id = study_db
    out = tmp_path / "run.json"
    done = run_cli("export", str(run_id), "--format", "json", "-o", out, "--db", path)
    assert (done.code, done.stdout) == (0, ""), done.stderr
    exported = json.loads(out.read_text())
    assert exported["schema"] == "gauntlet.export/1"
    (run,) = exported["runs"]
    assert (run["run_id"], run["suite"], run["status"], run["stored_cases"]) == (run_id, "study", "complete", len(stored))
    assert [c["case_id"] for c in exported["cases"]] == [c.case_id for c in stored]
    for case, row in zip(exported["cases"], stored, strict=True):
        assert (case["params"], case["result"], case["figures"], case["labels"]) == (row.params, row.result, row.figures, row.labels)


def test_csv_export_has_one_row_per_case_with_params_and_figures(study_db: tuple[Path, int], stored: list[CaseRow]) -> None:
    path, run_id = study_db
    done = run_cli("export", str(run_id), "--format", "csv", "--db", path)
    assert done.code == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == len(stored)
    header = done.stdout.splitlines()[0].split(",")
    assert header[:3] == ["run_id", "case_id", "key"] and header[-len(FIGURES):] == list(FIGURES)
    for row, case in zip(rows, stored, strict=True):
        assert row["case_id"] == str(case.case_id) and row["key"] == case.key
        assert row["server"] == case.params["server"] and row["group"] == case.params["group"]
        assert row["connections"] == str(case.params.get("connections", ""))
        for name in FIGURES:
            value = case.figures.get(name)
            assert row[name] == ("" if value is None else str(value))
        assert row["labels"] == "; ".join(case.labels) and row["breaches"] == "; ".join(case.breaches)


def test_cases_dataframe(study_db: tuple[Path, int], stored: list[CaseRow]) -> None:
    path, run_id = study_db
    with gauntlet.results.open(path) as results:
        cases = results.cases()
        assert results.cases(run_id).equals(cases)
        runs = results.runs()
        timelines = results.timelines(run_id)
    assert len(cases) == len(stored) and list(cases["case_id"]) == [c.case_id for c in stored]
    measured = cases[cases["status"] == "ok"]
    assert measured["requests_per_s"].tolist() == [c.figures["requests_per_s"] for c in stored if c.status == "ok"]
    assert cases["requests_per_s"].dtype.kind == "f" and cases["connections_opened"].notna().sum() == len(measured)
    by_group = measured.groupby("group")["requests_per_s"].mean()
    static = [c.figures["requests_per_s"] for c in stored if c.params.get("group") == "static"]
    assert by_group["static"] == pytest.approx(sum(static) / len(static))
    assert runs["run_id"].tolist() == [run_id] and runs["environment"][0]["cpu"]["cores"] >= 1
    assert len(timelines) == sum(len(c.result["timeline"]) for c in stored if c.result)


def test_a_parameter_named_like_a_column_is_prefixed(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with Store.open(path) as store:
        run_id = store.begin_run(suite="odd", suite_text=None, options={}, environment={}, planned_cases=1)
        store.add_case(run_id, CaseRecord(params={"server": "nginx", "status": "beta", "responses": 3}, error="did not start"))
    with gauntlet.results.open(path) as results:
        cases = results.cases()
    assert (cases["param_status"][0], cases["param_responses"][0], cases["status"][0]) == ("beta", 3, "error")
    assert cases["responses"].isna().all()


def test_export_errors_are_one_line(study_db: tuple[Path, int], tmp_path: Path) -> None:
    path, run_id = study_db
    done = run_cli("export", str(run_id), "--format", "csv", "-o", tmp_path / "missing" / "run.csv", "--db", path)
    assert done.code == 2 and done.stderr.startswith("gauntlet: error: cannot write") and done.stderr.count("\n") == 1
    with pytest.raises(GauntletError, match="there is no results database"):
        gauntlet.results.open(tmp_path / "nothing.db")
    with gauntlet.results.open(path) as results, pytest.raises(GauntletError, match="there is no run 42"):
        results.cases(42)


def test_the_cli_starts_without_pandas_plotly_or_the_store() -> None:
    code = "import sys, gauntlet.cli; print(sorted(m for m in ('pandas', 'plotly', 'gauntlet.store') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == "[]\n"


def test_every_error_kind_and_system_figure_has_a_column(study_db: tuple[Path, int], stored: list[CaseRow]) -> None:
    """Issue 18: each error kind, the non-2xx share, interrupts, pages freed, CPU % and load, as columns."""
    path, run_id = study_db
    done = run_cli("export", str(run_id), "--format", "csv", "--db", path)
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    for column in ("failed_share", "errors_timeout", "errors_reset", "errors_connect_refused", "non_2xx_share",
                   "server_interrupts_per_request", "server_pages_freed_per_request", "server_cpu_percent",
                   "server_load_1m"):
        assert column in rows[0], column
    faults = [(row, case) for row, case in zip(rows, stored, strict=True) if case.params.get("group") == "faults"]
    assert faults
    for row, case in faults:
        assert case.result is not None and case.result["errors"]["reset"] > 0
        assert row["errors_reset"] == str(case.result["errors"]["reset"]) and float(row["failed_share"]) == 1.0
    static = next(row for row, case in zip(rows, stored, strict=True) if case.params.get("group") == "static")
    assert (static["errors_timeout"], static["failed_share"], static["non_2xx_share"]) == ("0", "0.0", "0.0")


def test_timelines_say_whose_second_it_is(study_db: tuple[Path, int], stored: list[CaseRow]) -> None:
    path, run_id = study_db
    with gauntlet.results.open(path) as results:
        timelines = results.timelines(run_id)
    by_case = {c.case_id: c for c in stored}
    assert len(timelines) > 0
    for row in timelines.itertuples():
        case = by_case[row.case_id]
        assert (row.server, row.group, row.repeat) == (case.params.get("server"), case.params.get("group"), case.repeat)


def test_every_error_kind_of_the_engine_has_a_column() -> None:
    """A kind the engine adds needs its column (and a migration): the insert names every figure."""
    from gauntlet.schema import run_result
    from gauntlet.store.figures import ERROR_KINDS

    assert set(run_result()["properties"]["errors"]["required"]) <= set(ERROR_KINDS)

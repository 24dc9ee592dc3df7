"""`gauntlet findings`: a study's claims judged against a real stored suite run on the built-in server,
and every shipped study's claims well formed and traced to the paper."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from gauntlet.analysis.findings import DOES_NOT_HOLD, HOLDS, NOT_MEASURED, Judged, Reach, _reach, judge
from gauntlet.analysis.machine import MACHINE_BUSY
from gauntlet.analysis.verdict import NoiseFloor
from gauntlet.report.findings import judged_run
from gauntlet.store import CaseRow, Store
from gauntlet.suite.load import load_suite, run_claims, shipped_names
from tests.helpers.cli_process import run_cli
from tests.helpers.loads import per_user_delay_load

SUITE = """
name: findings-check
servers: [builtin]
groups:
  - name: held
    path: ["/webtest.html?delay_ms=2", "/webtest.html?delay_ms=40"]
    connections: [4]
    duration: 8s
    warmup: 300ms
findings:
  - id: slower-by-far
    claim: a response held 40 ms takes at least twice as long as one held 2 ms
    source: the built-in server's delay_ms
    paper: 20x
    kind: ratio
    figure: latency_p50_us
    by: path
    numerator: /webtest.html?delay_ms=40
    denominator: /webtest.html?delay_ms=2
    at_least: 2
  - id: faster-by-far
    claim: a response held 40 ms takes at most as long as one held 2 ms
    source: made up, to be refuted
    paper: none
    kind: ratio
    figure: latency_p50_us
    by: path
    numerator: /webtest.html?delay_ms=40
    denominator: /webtest.html?delay_ms=2
    at_most: 1
  - id: short-hold-first
    claim: the 2 ms response is quicker than the 40 ms one
    source: the built-in server's delay_ms
    paper: 2 ms against 40 ms
    kind: order
    figure: latency_p50_us
    by: path
    order: [["/webtest.html?delay_ms=2"], ["/webtest.html?delay_ms=40"]]
    higher_is_better: false
  - id: long-hold-first
    claim: the 40 ms response is quicker than the 2 ms one
    source: made up, to be refuted
    paper: none
    kind: order
    figure: latency_p50_us
    by: path
    order: [["/webtest.html?delay_ms=40"], ["/webtest.html?delay_ms=2"]]
    higher_is_better: false
  - id: cherokee
    claim: the built-in server beats Cherokee
    source: made up, about a server the run did not measure
    paper: none
    kind: order
    figure: requests_per_s
    by: server
    order: [[builtin], [cherokee]]
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results database of one run of SUITE; its report opens with the findings."""
    folder = tmp_path_factory.mktemp("findings")
    suite, db = folder / "check.yaml", folder / "runs.db"
    suite.write_text(SUITE)
    ran = run_cli("suite", "run", suite, "--db", db, "-o", folder / "report.html", timeout_s=180)
    assert ran.code == 0, ran.stderr
    html = (folder / "report.html").read_text()
    assert html.index("Findings: run 1, findings-check (2 hold, 2 do not hold, 1 not measured)") < html.index('id="verdict"')
    return db


@pytest.fixture(scope="module")
def judged(stored: Path) -> dict[str, dict[str, str]]:
    done = run_cli("findings", "1", "--db", stored, "--json", timeout_s=60)
    assert done.code == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["claims_from"] == "the suite file as it was run"
    return {item["id"]: item for item in found["findings"]}


def test_markdown_states_the_command_the_machine_and_every_claim(stored: Path, judged: dict[str, dict[str, str]]) -> None:
    done = run_cli("findings", "1", "--db", stored, "--markdown", timeout_s=60)
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "# Findings: findings-check"
    assert "- **Command:** `gauntlet suite run findings-check`, then `gauntlet findings 1 --markdown`" in lines
    assert any(line.startswith("- **Machine:** ") and " cores, " in line for line in lines)
    assert "- **Tally:** 2 hold, 2 do not hold, 1 not measured" in lines
    rows = [line for line in lines if line.startswith("| ")]
    assert rows[:2] == ["| finding | claim | paper | measured | verdict |", "| --- | --- | --- | --- | --- |"]
    assert sorted(row.split(" | ")[0].removeprefix("| ") for row in rows[2:]) == sorted(judged)


def test_a_verdict_on_cases_of_a_busy_machine_says_so(stored: Path) -> None:
    with Store.open_read_only(stored) as store:
        cases = store.cases([1])
        claims = [claim for claim in run_claims("findings-check", store.run(1).suite_text)[0] if claim.id == "slower-by-far"]
    quiet = [replace(case, labels=[label for label in case.labels if label != MACHINE_BUSY]) for case in cases]
    assert judge(claims, quiet)[0].why == ""
    (marked,) = judge(claims, [quiet[0], busy_case(quiet[1], other_share=0.2, steal_share=0.05)])
    assert (marked.verdict, marked.why) == (HOLDS, "machine busy in 1 of 2 cases")
    (stolen,) = judge(claims, [busy_case(quiet[0], 0.2, 0.15), busy_case(quiet[1], 0.2, 0.05)])
    assert stolen.why == "machine busy in 2 of 2 cases (the hypervisor's steal the larger part in 1)"


def busy_case(case: CaseRow, other_share: float, steal_share: float) -> CaseRow:
    """The case labelled machine-busy, with these shares of the cores taken by other work and steal."""
    assert case.result is not None
    machine = {"other_cpu_share": other_share, "steal_share": steal_share}
    result = case.result | {"bottleneck": case.result["bottleneck"] | {"machine": machine}}
    return replace(case, labels=[*case.labels, MACHINE_BUSY], result=result)


def test_a_large_ratio_holds_and_its_opposite_does_not(judged: dict[str, dict[str, str]]) -> None:
    # Latencies the server sets (2 ms and 40 ms), not the machine's speed: the verdicts hold however busy it is.
    assert judged["slower-by-far"]["verdict"] == HOLDS, judged["slower-by-far"]
    assert judged["faster-by-far"]["verdict"] == DOES_NOT_HOLD, judged["faster-by-far"]
    assert judged["slower-by-far"]["measured"].count("x [") == 1, judged["slower-by-far"]


def test_an_order_holds_and_its_reverse_does_not(judged: dict[str, dict[str, str]]) -> None:
    assert judged["short-hold-first"]["verdict"] == HOLDS, judged["short-hold-first"]
    assert judged["long-hold-first"]["verdict"] == DOES_NOT_HOLD, judged["long-hold-first"]
    assert judged["short-hold-first"]["measured"].startswith("latency_p50_us: /webtest.html?delay_ms=2 0.0"), judged["short-hold-first"]


def test_a_server_not_measured_is_named(judged: dict[str, dict[str, str]]) -> None:
    assert judged["cherokee"]["verdict"] == NOT_MEASURED
    assert judged["cherokee"]["why"] == "the run did not measure server cherokee"


def test_findings_refuses_a_run_that_is_not_a_suite(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert run_cli("run", "-n", "200", "-c", "2", "--db", db, timeout_s=60).code == 0
    done = run_cli("findings", "1", "--db", db, timeout_s=60)
    assert done.code == 2
    assert "run 1 is a `gauntlet run`, not a study suite" in done.stderr
    assert "Traceback" not in done.stderr


FAILING_SUITE = """
name: failing-statuses
servers: [builtin]
groups:
  - name: pages
    path: ["/webtest.html?delay_ms=5", "/webtest.html?delay_ms=40", "/webtest.html?status=502"]
    connections: [2, 4]
    duration: 2s
    warmup: 200ms
findings:
  - id: quick-first
    claim: the page held 5 ms serves more requests/s than the one held 40 ms and the failing one
    source: the built-in server's delay_ms and status
    paper: none
    kind: order
    figure: requests_per_s
    by: path
    order: [["/webtest.html?delay_ms=5"], ["/webtest.html?delay_ms=40", "/webtest.html?status=502"]]
  - id: failing-fastest
    claim: the page answered 502 at once serves more requests/s than the one held 40 ms
    source: made up; a 502 is not the page
    paper: none
    kind: ratio
    figure: requests_per_s
    by: path
    numerator: /webtest.html?status=502
    denominator: /webtest.html?delay_ms=40
    at_least: 2
  - id: held-longer
    claim: the page held 40 ms holds more connections than the failing one
    source: the built-in server's status
    paper: none
    kind: held
    by: path
    axis: connections
    order: [["/webtest.html?delay_ms=40"], ["/webtest.html?status=502"]]
"""


def test_a_page_answered_502_is_not_a_fast_page(tmp_path: Path) -> None:
    """A gateway answering 502 at once to every request (php-cgi behind nginx at 500 connections)
    serves many "requests/s": the run's line says how many were not 2xx/3xx, figure claims leave
    such error-bound cases out, and a held claim counts them failed."""
    suite, db = tmp_path / "failing.yaml", tmp_path / "runs.db"
    suite.write_text(FAILING_SUITE)
    ran = run_cli("suite", "run", suite, "--db", db, "-o", tmp_path / "report.html", timeout_s=180)
    assert ran.code == 0, ran.stderr
    failing_lines = [line for line in ran.stderr.splitlines() if "status=502" in line and " req/s " in line]
    assert len(failing_lines) == 2 and all("non-2xx/3xx" in line and "error-bound" in line for line in failing_lines), ran.stderr
    done = run_cli("findings", "1", "--db", db, "--json", timeout_s=60)
    assert done.code == 0, done.stderr
    found = {item["id"]: item for item in json.loads(done.stdout)["findings"]}
    left_out = "left out, error-bound: /webtest.html?status=502 (connections 2); /webtest.html?status=502 (connections 4)"
    assert found["quick-first"]["verdict"] == HOLDS, found["quick-first"]
    assert found["quick-first"]["measured"].endswith(left_out), found["quick-first"]
    assert (found["failing-fastest"]["verdict"], found["failing-fastest"]["why"]) == (NOT_MEASURED, left_out)
    assert found["held-longer"]["verdict"] == HOLDS, found["held-longer"]
    assert "/webtest.html?status=502 held no level, failed at connections 2" in found["held-longer"]["measured"], found["held-longer"]


@pytest.mark.parametrize(
    ("levels", "held", "failed"),
    [
        ([(200, True), (2000, True), (4000, False)], 2000, 4000),
        ([(4000, False), (200, True)], 200, 4000),
        ([(1, True), (2, True)], 2, None),
        ([(10, False), (20, True)], None, 10),
    ],
)
def test_reach_is_the_last_level_held_before_the_first_failure(
    levels: list[tuple[float, bool]], held: float | None, failed: float | None
) -> None:
    assert _reach(levels) == Reach(held, failed)


def test_a_server_beats_another_only_past_its_failure() -> None:
    assert Reach(8000, None).beats(Reach(2000, 4000))
    assert not Reach(2000, 4000).beats(Reach(8000, None))
    # Neither failed: nothing tells them apart.
    assert not Reach(8000, None).beats(Reach(20000, None))
    assert not Reach(2000, 4000).beats(Reach(3000, 4000)) and not Reach(3000, 4000).beats(Reach(2000, 4000))


STUDIES = ("thesis", "nguyen", "deathmatch", "webbench", "specweb", "specweb-dynamic", "wordpress")


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_states_three_claims_traced_to_its_paper(name: str) -> None:
    assert name in shipped_names()
    claims = load_suite(name).suite.findings
    assert len(claims) >= 3
    for claim in claims:
        assert claim.source.strip() and claim.paper.strip()


def test_a_claim_about_a_figure_the_store_lacks_is_refused_in_one_line(tmp_path: Path) -> None:
    suite = tmp_path / "typo.yaml"
    suite.write_text(SUITE.replace("figure: latency_p50_us", "figure: latency_p50_ms", 1))
    done = run_cli("suite", "run", suite, "--db", tmp_path / "runs.db", timeout_s=60)
    assert done.code == 2
    assert "finding slower-by-far is about 'latency_p50_ms', which is not a stored figure" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "runs.db").exists()


CAPACITY_SUITE = """
name: at-capacity
servers: [builtin]
groups:
  - {name: quick, model: sessions, load: quick.yaml, capacity: {start: 4, max_probes: 5}}
  - {name: slow, model: sessions, load: slow.yaml, capacity: {start: 4, max_probes: 5}}
findings:
  - id: slower-at-equal-load
    claim: at the same users, a page that waits 20 ms per connection takes about twice one that waits 10 ms
    source: the built-in server's delay_per_connection_ms
    paper: 2x
    kind: ratio
    figure: latency_p50_us
    where: {group: [quick, slow]}
    ignore: [load]
    by: group
    numerator: slow
    denominator: quick
    at_least: 1.6
  - id: alike-at-capacity
    claim: each at its own capacity, both pages take about the QoS limit
    source: the built-in server's delay_per_connection_ms
    paper: 1x
    kind: ratio
    figure: latency_p50_us
    where: {group: [quick, slow]}
    ignore: [load]
    by: group
    numerator: slow
    denominator: quick
    at_least: 0.6
    at_most: 1.6
    compared_at: capacity
"""


@pytest.fixture(scope="module")
def capacity_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of one complete run of CAPACITY_SUITE: the suite, its load files, runs.db."""
    folder = tmp_path_factory.mktemp("capacity")
    suite = folder / "capacity.yaml"
    suite.write_text(CAPACITY_SUITE)
    (folder / "quick.yaml").write_text(per_user_delay_load(10))
    (folder / "slow.yaml").write_text(per_user_delay_load(20))
    ran = run_cli("suite", "run", suite, "--db", folder / "runs.db", "-o", folder / "report.html", timeout_s=180)
    assert ran.code == 0, ran.stderr
    return folder


def judged_at_capacity(db: Path) -> dict[str, Judged]:
    """Run 1's claims judged as `gauntlet findings` judges them, on a 10 % noise floor: latency's
    default floor (140 %) leaves any 2x ratio inconclusive."""
    with Store.open_read_only(db) as store:
        judged, _ = judged_run(store.run(1), store.cases([1]), {"latency_p50_us": NoiseFloor("latency_p50_us", 0.1, "the test's")},
                               store.done(1))
    return {item.claim.id: item for item in judged}


def test_a_ratio_compared_at_capacity_takes_each_search_at_its_largest_valid_level(capacity_run: Path) -> None:
    """Users wait 10 or 20 ms per simultaneous user: at equal users the slow page takes twice as
    long; each at its own capacity (about 16 and 8 users) both take about the QoS limit."""
    found = judged_at_capacity(capacity_run / "runs.db")
    equal_load, at_capacity = found["slower-at-equal-load"], found["alike-at-capacity"]
    assert equal_load.verdict == HOLDS, equal_load
    assert "(users 4)" in equal_load.measured and "(users 8)" in equal_load.measured
    assert at_capacity.verdict == HOLDS, at_capacity
    assert re.search(r"\(at capacity: \d+ and \d+ users\)", at_capacity.measured), at_capacity.measured


def test_a_search_the_run_did_not_finish_is_not_judged_until_resumed(capacity_run: Path, tmp_path: Path) -> None:
    """The run as Ctrl-C in the slow search's last probe leaves it (that probe stored partial, the
    run interrupted): its highest valid probe is no capacity, so the claim at capacity is not
    measured, and says why; the resume measures the probe again and the claim is judged."""
    for name in ("capacity.yaml", "quick.yaml", "slow.yaml"):
        shutil.copy(capacity_run / name, tmp_path / name)
    db = tmp_path / "runs.db"
    shutil.copy(capacity_run / "runs.db", db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET status = 'interrupted', options_json = replace(options_json, ?, ?)",
                     (str(capacity_run), str(tmp_path)))
        conn.execute("UPDATE cases SET status = 'partial' WHERE case_id = (SELECT max(case_id) FROM cases"
                     " WHERE json_extract(params_json, '$.group') = 'slow')")
    cut = judged_at_capacity(db)
    assert (cut["alike-at-capacity"].verdict, cut["alike-at-capacity"].why) == (
        NOT_MEASURED, "left out, capacity search not finished (resume the run): slow"
    ), cut["alike-at-capacity"]
    assert cut["slower-at-equal-load"].verdict == HOLDS, cut["slower-at-equal-load"]
    resumed = run_cli("suite", "run", "--resume", "1", "--db", db, timeout_s=180)
    assert resumed.code == 0, resumed.stderr
    assert judged_at_capacity(db)["alike-at-capacity"].verdict == HOLDS

"""`gauntlet findings`: a study's claims judged against a real stored suite run on the built-in server,
and every shipped study's claims well formed and traced to the paper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gauntlet.analysis.findings import DOES_NOT_HOLD, HOLDS, NOT_MEASURED, Reach, _reach
from gauntlet.suite.load import load_suite, shipped_names
from tests.helpers.cli_process import run_cli

SUITE = """
name: findings-check
servers: [builtin]
groups:
  - name: static
    workload: [ST-1, ST-3]
    keepalive: [true, false]
    connections: [10]
    duration: 6s
    warmup: 300ms
findings:
  - id: keepalive-gain
    claim: keep-alive serves at least 1.5x the requests/s of a new connection per request
    source: "thesis §4.1.1"
    paper: Apache +50 %
    kind: ratio
    figure: requests_per_s
    by: keepalive
    numerator: true
    denominator: false
    at_least: 1.5
  - id: keepalive-loss
    claim: keep-alive serves at most half the requests/s of a new connection per request
    source: made up, to be refuted
    paper: none
    kind: ratio
    figure: requests_per_s
    by: keepalive
    numerator: true
    denominator: false
    at_most: 0.5
  - id: small-page-first
    claim: the 168-byte page is served at more requests/s than the 83,572-byte image
    source: "thesis §4.1"
    paper: ST-1 up to 30,000 req/s, ST-3 1,400
    kind: order
    figure: requests_per_s
    where: {keepalive: true}
    by: workload
    order: [[ST-1], [ST-3]]
  - id: image-first
    claim: the image is served at more requests/s than the page
    source: made up, to be refuted
    paper: none
    kind: order
    figure: requests_per_s
    where: {keepalive: true}
    by: workload
    order: [[ST-3], [ST-1]]
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
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    folder = tmp_path_factory.mktemp("findings")
    suite, db = folder / "check.yaml", folder / "runs.db"
    suite.write_text(SUITE)
    ran = run_cli("suite", "run", suite, "--db", db, "-o", folder / "report.html", timeout_s=180)
    assert ran.code == 0, ran.stderr
    done = run_cli("findings", "1", "--db", db, "--json", timeout_s=60)
    assert done.code == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["claims_from"] == "the suite file as it was run"
    return {item["id"]: item for item in found["findings"]}


def test_a_large_ratio_holds_and_its_opposite_does_not(judged: dict[str, dict[str, str]]) -> None:
    assert judged["keepalive-gain"]["verdict"] == HOLDS, judged["keepalive-gain"]
    assert judged["keepalive-loss"]["verdict"] == DOES_NOT_HOLD, judged["keepalive-loss"]
    # One ratio per cell (page), each with its interval.
    measured = judged["keepalive-gain"]["measured"]
    assert measured.count("x [") == 2 and "workload ST-1" in measured and "workload ST-3" in measured, measured


def test_an_order_holds_and_its_reverse_does_not(judged: dict[str, dict[str, str]]) -> None:
    assert judged["small-page-first"]["verdict"] == HOLDS, judged["small-page-first"]
    assert judged["image-first"]["verdict"] == DOES_NOT_HOLD, judged["image-first"]
    assert "ST-1" in judged["small-page-first"]["measured"]


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
    suite.write_text(SUITE.replace("figure: requests_per_s\n    by: keepalive", "figure: requests_per_sec\n    by: keepalive", 1))
    done = run_cli("suite", "run", suite, "--db", tmp_path / "runs.db", timeout_s=60)
    assert done.code == 2
    assert "finding keepalive-gain is about 'requests_per_sec', which is not a stored figure" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "runs.db").exists()

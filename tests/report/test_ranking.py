"""The verdict first (docs/reports.md#the-verdict): cases that ran the same load on different servers
are ranked, with the share of the best and the reason taken from their bottleneck labels and
per-request costs. Real cases (golden/study-cases.json: the built-in server on one thread and on
two, through a rate sweep, a concurrency sweep and a soak), stored in a real SQLite file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gauntlet.report import ranking, verdicts
from gauntlet.report.points import GridPoint
from gauntlet.report.tables import rich_table


def group(rankings: list[ranking.Ranking], name: str) -> ranking.Ranking:
    (found,) = [r for r in rankings if r.name == name]
    return found


def test_cases_of_one_load_are_ranked_by_requests_per_s(points: list[GridPoint]) -> None:
    found = ranking.rankings(points)
    # Two workers against one at each level of each study: the soak, three concurrencies, two rates.
    assert [r.name for r in found] == [
        "rate-sweep, rate, 8 conns, 200/s", "rate-sweep, rate, 8 conns, 400/s",
        "concurrency, no keep-alive, 2 conns, 0.1 s timeout", "concurrency, no keep-alive, 4 conns, 0.1 s timeout",
        "concurrency, no keep-alive, 6 conns, 0.1 s timeout", "soak, 4 conns",
    ]
    soak = group(found, "soak, 4 conns")
    rates = {p.params["workers"]: p.figure("requests_per_s").point for p in points if p.params.get("group") == "soak"}
    best, other = soak.contenders
    assert best.value == max(rates.values()) and other.value == min(rates.values())
    assert (best.of_best, other.of_best) == (1.0, pytest.approx(min(rates.values()) / max(rates.values())))
    assert {best.name, other.name} == {"1 worker", "2 workers"}


def test_a_constant_rate_is_ranked_by_its_latency(points: list[GridPoint]) -> None:
    """Under a rate every server answers the rate offered: requests/s says nothing, the latency does;
    the p99 needs 1,000 responses (stats.percentile_shown), which 0.6 s at 200/s are not: the p50."""
    rate = group(ranking.rankings(points), "rate-sweep, rate, 8 conns, 200/s")
    assert rate.metric == ranking.LATENCY_P50
    best, other = rate.contenders
    assert best.value <= other.value and best.of_best == 1.0 and other.of_best == pytest.approx(best.value / other.value)
    assert other.ratio is not None and other.ratio.point == pytest.approx(other.value / best.value)
    assert verdicts.versus(rate, other).startswith(f"p50: {best.name} {other.value / best.value:.2f}x lower than {other.name}")


def test_a_ranking_among_client_bound_cases_says_it_is_the_clients_limit(points: list[GridPoint]) -> None:
    """At 2 connections without keep-alive both servers were client-bound: the ranking measured the
    load generator, and the verdict says so rather than crowning a server."""
    two = group(ranking.rankings(points), "concurrency, no keep-alive, 2 conns, 0.1 s timeout")
    assert all(c.point.labels == ["client-bound"] for c in two.contenders)
    assert verdicts.client_limited(two)
    reason = verdicts.reason(two)
    assert reason.startswith("both client-bound: the load generator's limit, not the servers' (client ")
    costs = [verdicts.format_per_request(c.point.figure("client_cpu_us_per_request").point) for c in two.contenders]
    assert reason.endswith(f"(client {costs[0]} vs {costs[1]} µs/request)")


def test_the_reason_names_each_contenders_labels_and_the_server_cost(points: list[GridPoint]) -> None:
    soak = group(ranking.rankings(points), "soak, 4 conns")
    assert not verdicts.client_limited(soak), "one of them was server-CPU-bound too"
    reason = verdicts.reason(soak)
    by_name = {c.name: c for c in soak.contenders}
    assert "2 workers client-bound and server-CPU-bound" in reason and "1 worker not saturated" in reason
    server = [verdicts.format_per_request(c.point.figure("server_cpu_us_per_request").point) for c in soak.contenders]
    assert reason.endswith(f"{server[0]} vs {server[1]} µs/request of server CPU")
    best, other = soak.contenders
    assert other.ratio is not None and other.ratio.has_interval, "2.5 s: batch means over its seconds"
    ratio = best.value / other.value
    assert other.ratio.point == pytest.approx(ratio) and other.ratio.low < ratio < other.ratio.high
    interval = f"[{other.ratio.low:.2f}-{other.ratio.high:.2f}]"
    assert verdicts.headline(soak).startswith(f"{best.name} {ratio:.2f}x {other.name} {interval}")
    assert other.verdict is not None and not other.verdict.detected, "the interval holds 1"
    assert f"no difference detected (within ±{other.verdict.reach:.0%})" in verdicts.headline(soak)
    assert set(by_name) == {best.name, other.name}


def test_error_bound_cases_are_not_ranked_by_their_figure(points: list[GridPoint]) -> None:
    """At 6 connections one server timed out and the other reset every request: 0 requests/s each,
    which is no speed; the verdict gives their failures instead of a ratio."""
    six = group(ranking.rankings(points), "concurrency, no keep-alive, 6 conns, 0.1 s timeout")
    assert all(c.failing for c in six.contenders)
    assert verdicts.headline(six) == (
        "1 worker error-bound (100% of its requests failed); 2 workers error-bound (100% of its requests failed): no ranking"
    )


def test_cases_of_different_loads_are_never_ranked_together(points: list[GridPoint]) -> None:
    for found in ranking.rankings(points):
        loads = {repr({k: v for k, v in c.point.params.items() if k not in ranking.CONTENDER_PARAMS}) for c in found.contenders}
        assert len(loads) == 1, found.name
    alone = [p for p in points if p.params.get("group") == "soak"][:1]
    assert ranking.rankings(alone) == [], "one server: nothing to rank"


def test_two_runs_of_one_command_are_contenders(points: list[GridPoint]) -> None:
    """`gauntlet report 1 2` of two `gauntlet run`s against two servers: the run tells them apart."""
    soak = [p for p in points if p.params.get("group") == "soak"]
    runs = [replace(p, params={**p.params, "workers": 2, "run": run}) for p, run in zip(soak, (3, 4), strict=True)]
    (found,) = ranking.rankings(runs)
    assert sorted(c.name for c in found.contenders) == ["run 3", "run 4"]


def test_the_terminal_verdict_is_the_first_table(points: list[GridPoint]) -> None:
    table = verdicts.verdicts_table(points)
    assert table.title == "Verdict" and len(table.rows) == len(ranking.rankings(points))
    row = next(r for r in table.rows if r[0] == "soak, 4 conns")
    assert row[1].split(", ")[0].endswith("100%") and row[2] == verdicts.headline(group(ranking.rankings(points), row[0]))
    assert rich_table(table).row_count == len(table.rows)

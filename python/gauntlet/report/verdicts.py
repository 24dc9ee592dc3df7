"""The rankings in words, for the terminal summary and the report's first section:
`lighttpd 2.6x nginx [2.4-2.8], both server-CPU-bound: 10 vs 27 µs/request`.

The reason comes from the bottleneck labels (gauntlet.analysis.bottleneck) and the per-request
costs: when every contender was client-bound and none server-CPU-bound, the ranking measured the
load generator, and the sentence says so instead of crowning a server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gauntlet.analysis.bottleneck import CLIENT_BOUND, SERVER_CPU_BOUND, failed_share
from gauntlet.analysis.stats import Estimate
from gauntlet.analysis.verdict import NoiseFloor, Verdict
from gauntlet.report.points import GridPoint
from gauntlet.report.ranking import Contender, Ranking, rankings
from gauntlet.report.views import Column, Table, format_per_request
from gauntlet.units import format_count, format_duration_us

#: The labels as a sentence writes them.
LABEL_WORDS = {SERVER_CPU_BOUND: "server-CPU-bound"}


def _labels(contender: Contender) -> list[str]:
    return contender.point.labels


def _label_words(labels: list[str]) -> str:
    return " and ".join(LABEL_WORDS.get(label, label) for label in labels) or "not saturated"


def _shared_words(labels: list[str], count: int) -> str:
    """What every contender was: 'both client-bound', 'all 3 server-CPU-bound', 'neither saturated';
    for one case alone, what it was."""
    if count == 1:
        return _label_words(labels)
    if not labels:
        return "neither saturated" if count == 2 else "none saturated"
    return f"{'both' if count == 2 else f'all {count}'} {_label_words(labels)}"


def _client_limited(label_sets: list[list[str]]) -> bool:
    return all(CLIENT_BOUND in labels and SERVER_CPU_BOUND not in labels for labels in label_sets)


def client_limited(ranking: Ranking) -> bool:
    """Every contender client-bound and none server-CPU-bound: the load generator set the pace."""
    return _client_limited([_labels(c) for c in ranking.contenders])


def _costs(values: list[float | None]) -> str | None:
    """'10 vs 27 µs/request' in rank order, None when one has no such figure."""
    present = [v for v in values if v is not None]
    return None if len(present) < len(values) else " vs ".join(map(format_per_request, present)) + " µs/request"


def reason_words(names: list[str], label_sets: list[list[str]], client_us: list[float | None], server_us: list[float | None]) -> str:
    """Why the figures came out so, in a phrase: the labels the cases share (or each one's), then
    the CPU per request that explains it; the load generator's limit where every case was
    client-bound and none server-CPU-bound."""
    if all(labels == label_sets[0] for labels in label_sets):
        words = _shared_words(label_sets[0], len(names))
    else:
        words = ", ".join(f"{name} {_label_words(labels)}" for name, labels in zip(names, label_sets, strict=True))
    if _client_limited(label_sets):
        client = _costs(client_us)
        servers = "the servers'" if len(names) > 1 else "the server's"
        return f"{words}: the load generator's limit, not {servers}" + (f" (client {client})" if client else "")
    server = _costs(server_us)
    return f"{words}: {server} of server CPU" if server else words


def reason(ranking: Ranking) -> str:
    """Why the ranking came out so (reason_words of its contenders, in rank order)."""
    contenders = ranking.contenders

    def costs(side: str) -> list[float | None]:
        return [None if (e := c.point.figure(f"{side}_cpu_us_per_request")) is None else e.point for c in contenders]

    return reason_words([c.name for c in contenders], [_labels(c) for c in contenders], costs("client"), costs("server"))


def ratio_words(ratio: Estimate, between: str) -> str:
    """'2.6x nginx [2.4-2.8]' (`between` after the 'x'), without the brackets when there is no
    interval; two decimals below 2x, one from there, the interval as the point."""
    digits = 2 if ratio.point < 2 else 1
    interval = f" [{ratio.low:.{digits}f}-{ratio.high:.{digits}f}]" if ratio.has_interval else ""
    return f"{ratio.point:.{digits}f}x {between}{interval}"


def _undetected(verdict: Verdict | None) -> str:
    """', no difference detected (within ±15%)' when the lead is within the interval or the noise
    floor (analysis.verdict); nothing when it is a detected difference."""
    if verdict is None or verdict.detected:
        return ""
    return f", no difference detected (within ±{verdict.reach:.0%})"


def _failed_text(contender: Contender) -> str:
    share = contender.point.value(lambda case: None if case.result is None else failed_share(case.result))
    return f"{contender.name} error-bound" + ("" if share is None else f" ({share.point:.0%} of its requests failed)")


def versus(ranking: Ranking, other: Contender) -> str:
    """The best against one other: 'lighttpd 2.6x nginx [2.4-2.8]' (requests/s), 'p99: lighttpd
    2.6x lower than nginx [2.4-2.8]' (latency), with 'no difference detected' where the verdict
    finds none; an error-bound contender is not compared, its failures are given."""
    best = ranking.best
    if other.failing or best.failing or other.ratio is None:
        return _failed_text(other) if other.failing else f"{other.name} not compared: no response to compare"
    undetected = _undetected(other.verdict)
    if ranking.metric.higher_is_better:
        return f"{best.name} {ratio_words(other.ratio, other.name)}{undetected}"
    return f"{ranking.metric.name}: {best.name} {ratio_words(other.ratio, 'lower than ' + other.name)}{undetected}"


def headline(ranking: Ranking) -> str:
    """The ranking in one sentence: the best against each other contender, then the reason."""
    if ranking.best.failing:
        return "; ".join(_failed_text(c) for c in ranking.contenders) + ": no ranking"
    comparisons = ", ".join(versus(ranking, other) for other in ranking.contenders[1:])
    return f"{comparisons}; {reason(ranking)}"


def format_metric(ranking: Ranking, estimate: Estimate) -> str:
    """The figure with its interval: '24,993 [24,627-25,110]', '1.20ms [1.10ms-1.31ms]'."""
    return estimate.text(format_count if ranking.metric.higher_is_better else format_duration_us)


def ranking_table(ranking: Ranking) -> Table:
    """The group's contenders, best first: the figure, its share of the best, what bounded it and
    the CPU each side spent per request."""
    rows = []
    for place, contender in enumerate(ranking.contenders, 1):
        server = contender.point.figure("server_cpu_us_per_request")
        client = contender.point.figure("client_cpu_us_per_request")
        rows.append([
            str(place), contender.name, format_metric(ranking, contender.estimate), f"{contender.of_best:.0%}",
            ", ".join(LABEL_WORDS.get(label, label) for label in _labels(contender)) or "-",
            "-" if server is None else format_per_request(server.point),
            "-" if client is None else format_per_request(client.point),
        ])
    columns = (
        Column("rank"), Column("contender", False), Column(ranking.metric.name), Column("% of best"),
        Column("bottleneck", False), Column("server µs/req"), Column("client µs/req"),
    )
    return Table("ranking", ranking.name, headline(ranking), columns, rows)


@dataclass(frozen=True)
class VerdictView:
    """One group's verdict as the report draws it: the headline, the table, a bar per row (its
    share of the best, 0..1)."""

    title: str
    headline: str
    table: Table
    shares: list[float]


def verdict_views(points: list[GridPoint], floors: dict[str, NoiseFloor] | None = None) -> list[VerdictView]:
    found = []
    for ranking in rankings(points, floors):
        table = ranking_table(ranking)
        found.append(VerdictView(ranking.name, headline(ranking), table, [c.of_best for c in ranking.contenders]))
    return found


def verdicts_table(points: list[GridPoint], floors: dict[str, NoiseFloor] | None = None) -> Table:
    """The terminal's verdict: a row per group of comparable cases, the contenders by their share of
    the best, then the headline."""
    rows = [
        [ranking.name, ", ".join(f"{c.name} {c.of_best:.0%}" for c in ranking.contenders), headline(ranking)]
        for ranking in rankings(points, floors)
    ]
    columns = (Column("same load", False), Column("% of best", False), Column("verdict", False))
    note = (
        "Cases that ran the same load on different servers, best first (requests/s; p99 latency under a constant rate); "
        "each ratio with its 95 % interval, and 'no difference detected' where it is within the interval or the noise floor."
    )
    return Table("verdicts", "Verdict", note, columns, rows)


def repeat_verdict(estimates: dict[str, dict[str, Any]], results: list[dict[str, Any]]) -> str:
    """The verdict of one case measured several times (`gauntlet run --repeat`): its requests/s with
    the interval (repeats_json's `estimates`), and why, from every repeat's bottleneck labels."""
    rate = estimates["requests_per_s"]
    interval = f" [{format_count(rate['low'])}-{format_count(rate['high'])}]" if rate["low"] != rate["high"] else ""
    labels = sorted({label for result in results for label in (result.get("bottleneck") or {}).get("labels", [])})

    def cost(side: str) -> float | None:
        found = estimates.get(f"{side}_cpu_us_per_request")
        return None if found is None else float(found["point"])

    why = reason_words(["the case"], [labels], [cost("client")], [cost("server")])
    return f"verdict: {format_count(rate['point'])} requests/s{interval} over {len(results)} repeats; {why}"

"""`--fail-on` thresholds, after k6's: a run that crosses one ends with a non-zero exit code, so a
script or a CI job sees it failed. Pure functions of the run result.

    errors>5%         the share of requests that failed (errors, non-2xx/3xx responses and requests
                      stuck unanswered, analysis.bottleneck.failed_share), or the
                      share of the measured interval they failed in (errors by second)
    p99>50ms          a latency percentile (p50, p90, p99, p99_9, max) above a duration; with too
                      few responses for the percentile (analysis.stats.percentile_shown) it is
                      judged by the max: at or under the limit, so is every percentile; above it,
                      the run fails with "n too small", neither passed nor failed on a guess
    rate-not-held     under --rate, the offered rate was not held (the rate-not-held label's rule)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gauntlet.analysis.bottleneck import failed_requests, failed_share, rate_held
from gauntlet.analysis.stats import TOO_FEW, min_responses, percentile_shown
from gauntlet.errors import GauntletError
from gauntlet.units import format_duration_us, parse_duration_us

#: A run with more than this share of failed requests fails unless --fail-on says otherwise.
DEFAULT_FAIL_ON = ("errors>5%",)
PERCENTILES = ("p50", "p90", "p99", "p99_9", "max")
_ERRORS = re.compile(r"^errors>(\d+(?:\.\d+)?)%$")
_LATENCY = re.compile(rf"^({'|'.join(PERCENTILES)})>(.+)$")
RATE_NOT_HELD = "rate-not-held"
FIX = "Write errors>5%, p99>50ms (p50, p90, p99, p99_9, max) or rate-not-held; --fail-on none turns the default off"


@dataclass(frozen=True)
class Threshold:
    text: str
    #: errors, a percentile name, or rate-not-held.
    measure: str
    limit: float


def parse_threshold(text: str) -> Threshold:
    spec = text.replace(" ", "")
    if spec == RATE_NOT_HELD:
        return Threshold(text, RATE_NOT_HELD, 0.0)
    if (match := _ERRORS.match(spec)) is not None:
        return Threshold(text, "errors", float(match[1]) / 100)
    if (match := _LATENCY.match(spec)) is not None:
        return Threshold(text, match[1], parse_duration_us(match[2], f"--fail-on {text!r}"))
    raise GauntletError(f"--fail-on {text!r} is not a threshold", FIX)


def parse_thresholds(texts: list[str] | None, default: tuple[str, ...] = DEFAULT_FAIL_ON) -> list[Threshold]:
    """The thresholds given (`default` when none; none at all with `none`). `run` fails on
    DEFAULT_FAIL_ON unless told otherwise; sweep, capacity and suite, which are meant to reach
    failure, have no default."""
    if texts == ["none"]:
        return []
    return [parse_threshold(text) for text in (texts or default)]


def crossed(threshold: Threshold, result: dict[str, Any]) -> str | None:
    """Why the result crosses the threshold, or None when it does not."""
    if threshold.measure == "errors":
        if "server_exit" in result:  # what came after the exit was never measured
            return f"{threshold.text}: {result['server_exit']['message']}"
        share = failed_share(result)
        if share > threshold.limit:
            return f"{threshold.text}: {share:.1%} of the requests failed ({failed_requests(result):,}, unanswered ones included)"
        failing = failing_time_share(result)
        if failing > threshold.limit:
            return f"{threshold.text}: requests failed over {failing:.1%} of the measured interval"
        return None
    if threshold.measure == RATE_NOT_HELD:
        schedule = result["schedule"]
        if schedule is not None and not rate_held(schedule):
            return f"{threshold.text}: sent {schedule['achieved_rate_per_s']:,.1f}/s of {schedule['offered_rate_per_s']:,.1f}/s"
        return None
    latency = result["latency_us"]
    if not latency["count"] or latency["max"] <= threshold.limit:
        return None
    if not percentile_shown(threshold.measure, latency["count"]):
        return (
            f"{threshold.text}: {TOO_FEW} to judge it ({latency['count']:,} responses, {threshold.measure} needs "
            f"{min_responses(threshold.measure):,}) and the max was {format_duration_us(latency['max'])}: "
            "run more requests or judge the max"
        )
    if latency[threshold.measure] > threshold.limit:
        return f"{threshold.text}: {threshold.measure} was {format_duration_us(latency[threshold.measure])}"
    return None


def failing_time_share(result: dict[str, Any]) -> float:
    """The measured interval's seconds weighted by the share of their requests that ended in an
    error. A server that stops answering shows here even though the connect backoff (1 ms doubling
    to 100 ms) keeps its refused connects few beside the requests answered before it died."""
    timeline = result["timeline"]
    total_us = sum(second["span_us"] for second in timeline)
    failing_us = sum(second["span_us"] * second["errors"] / second["requests"] for second in timeline if second["requests"])
    return failing_us / total_us if total_us else 0.0


def crossings(thresholds: list[Threshold], results: list[dict[str, Any]], labels: list[str] | None = None) -> list[str]:
    """Every threshold crossed by one of the results (each repeat, step or case is judged on its
    own), after its label ('concurrency 100: errors>5%: ...') when labels are given."""
    named = labels or [""] * len(results)
    return [
        f"{label}: {why}" if label else why
        for label, result in zip(named, results, strict=True) for t in thresholds if (why := crossed(t, result)) is not None
    ]

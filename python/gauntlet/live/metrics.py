"""`/metrics`: the live state in the OpenMetrics text format, through prometheus-client's exposition
code and a collector of our own over one LiveState (no global registry: several runs in one
process keep apart). Every series is labelled with the run, the case and the server that ran it.

A finished case's figures are its result's (the engine's totals and percentiles); the case under
way counts the timeline seconds it has so far. docs/watching.md lists the metrics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from gauntlet.live.state import LiveCase, LiveState

CASE_LABELS = ["run_id", "case_key", "case", "repeat", "server_kind", "server_version"]
#: The engine's latency percentiles (docs/results.md) as summary quantiles.
QUANTILES = {"0.5": "p50", "0.9": "p90", "0.99": "p99", "0.999": "p99_9"}
#: A timeline second's percentiles; its max as quantile 1.
SECOND_QUANTILES = {"0.5": "p50_us", "0.9": "p90_us", "0.99": "p99_us", "1": "max_us"}
CONTENT_TYPE = CONTENT_TYPE_LATEST


def role_cpu_s(points: list[dict[str, Any]]) -> dict[str, float]:
    """CPU seconds per role over the sampler's points (each role's % of one core over the span
    since the point before; the first point's span begins at the first sample, t_s 0)."""
    found: dict[str, float] = {}
    previous_t_s = 0.0
    for point in points:
        span_s = point["t_s"] - previous_t_s
        previous_t_s = point["t_s"]
        for role, used in point["roles"].items():
            found[role] = found.get(role, 0.0) + used["cpu_percent"] / 100 * span_s
    return found


def role_rss_bytes(case: LiveCase) -> dict[str, int]:
    """Each role's resident memory: the result's (at its last sample) once the case ended, the
    latest sample's until then."""
    server = None if case.record is None or case.record.result is None else case.record.result.get("server")
    if server is not None:
        return {role: memory["rss_bytes"] for role, memory in server["memory"].items()}
    if not case.server_points:
        return {}
    return {role: used["rss_bytes"] for role, used in case.server_points[-1]["roles"].items()}


def server_points(case: LiveCase) -> list[dict[str, Any]]:
    server = None if case.record is None or case.record.result is None else case.record.result.get("server")
    return list(server["timeline"]) if server is not None else case.server_points


class _Families:
    """The metric families of one scrape, filled case by case."""

    def __init__(self) -> None:
        def counter(name: str, doc: str, extra: list[str] | None = None, unit: str = "") -> CounterMetricFamily:
            return CounterMetricFamily(name, doc, labels=[*CASE_LABELS, *(extra or [])], unit=unit)

        def gauge(name: str, doc: str, extra: list[str] | None = None, unit: str = "") -> GaugeMetricFamily:
            return GaugeMetricFamily(name, doc, labels=[*CASE_LABELS, *(extra or [])], unit=unit)

        self.requests = counter("gauntlet_requests", "Measured requests that ended (responses and errors)")
        self.responses = counter("gauntlet_responses", "Responses received")
        self.errors = counter("gauntlet_errors", "Requests that failed, by error kind", ["kind"])
        self.bytes_in = counter("gauntlet_received_bytes", "Bytes received for measured requests", unit="bytes")
        self.latency = SummaryMetricFamily(
            "gauntlet_latency_seconds", "Latency from the intended send, the engine's percentiles (finished cases)",
            labels=CASE_LABELS, unit="seconds",
        )
        self.latency_max = gauge("gauntlet_latency_max_seconds", "The highest latency (finished cases)", unit="seconds")
        self.second_latency = gauge(
            "gauntlet_second_latency_seconds", "The last timeline second's latency percentiles (max as quantile 1)",
            ["quantile"], unit="seconds",
        )
        self.offered = gauge("gauntlet_offered_rate_per_second", "The rate offered (-R), requests/s")
        self.achieved = gauge(
            "gauntlet_achieved_rate_per_second",
            "Requests/s: the schedule's achieved rate or the responses/s of a finished case, the last second's responses/s before",
        )
        self.unanswered = gauge("gauntlet_unanswered_requests", "Requests not ended by the measured interval's end (finished cases)")
        self.cpu = counter("gauntlet_server_cpu_seconds", "Server CPU by role of its processes", ["role"], unit="seconds")
        self.rss = gauge("gauntlet_server_rss_bytes", "Server resident memory by role of its processes", ["role"], unit="bytes")
        self.running = gauge("gauntlet_case_running", "1 while the case's load runs, 0 once it ended")

    def all(self) -> list[Metric]:
        return [
            self.requests, self.responses, self.errors, self.bytes_in, self.latency, self.latency_max, self.second_latency,
            self.offered, self.achieved, self.unanswered, self.cpu, self.rss, self.running,
        ]

    def add(self, case: LiveCase, run_id: int | None) -> None:
        labels = [
            "" if run_id is None else str(run_id), case.key, case.label, str(case.repeat), case.server_kind or "",
            case.server_version or "",
        ]
        totals = case.totals()
        self.requests.add_metric(labels, totals["requests"])
        self.responses.add_metric(labels, totals["responses"])
        self.bytes_in.add_metric(labels, totals["bytes_in"])
        for kind, count in totals["errors_by_kind"].items():
            self.errors.add_metric([*labels, kind], count)
        self.running.add_metric(labels, 0 if case.record is not None else 1)
        result = None if case.record is None else case.record.result
        if result is not None:
            self._result(labels, result)
        elif case.seconds:
            last = case.seconds[-1]
            for quantile, name in SECOND_QUANTILES.items():
                self.second_latency.add_metric([*labels, quantile], last[name] / 1e6)
            self.achieved.add_metric(labels, last["responses"] * 1e6 / last["span_us"] if last["span_us"] else 0.0)
        offered = case.params.get("rate_per_s")
        if offered is not None:
            self.offered.add_metric(labels, float(offered))
        for role, cpu_s in role_cpu_s(server_points(case)).items():
            self.cpu.add_metric([*labels, role], cpu_s)
        for role, rss_bytes in role_rss_bytes(case).items():
            self.rss.add_metric([*labels, role], rss_bytes)

    def _result(self, labels: list[str], result: dict[str, Any]) -> None:
        latency = result["latency_us"]
        self.latency.add_metric(labels, latency["count"], latency["mean"] * latency["count"] / 1e6)
        for quantile, name in QUANTILES.items():
            self.latency.add_sample(self.latency.name, dict(zip(CASE_LABELS, labels, strict=True)) | {"quantile": quantile}, latency[name] / 1e6)
        self.latency_max.add_metric(labels, latency["max"] / 1e6)
        schedule = result.get("schedule")
        self.achieved.add_metric(labels, schedule["achieved_rate_per_s"] if schedule else result["requests_per_s"])
        self.unanswered.add_metric(labels, result["unanswered"]["count"])


class LiveCollector(Collector):
    def __init__(self, state: LiveState) -> None:
        self._state = state

    def collect(self) -> Iterator[Metric]:
        families = _Families()
        for case in self._state.cases():
            families.add(case, self._state.run_id)
        run_labels = ["" if self._state.run_id is None else str(self._state.run_id)]
        cases = GaugeMetricFamily("gauntlet_run_cases", "The run's cases: planned (when known) and finished", labels=["run_id", "state"])
        finished = sum(1 for case in self._state.cases() if case.record is not None)
        cases.add_metric([*run_labels, "finished"], finished)
        if self._state.planned_cases is not None:
            cases.add_metric([*run_labels, "planned"], self._state.planned_cases)
        yield from families.all()
        yield cases


def exposition(state: LiveState) -> bytes:
    """The state's metrics in the OpenMetrics text format (ending in `# EOF`)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LiveCollector(state))
    return bytes(generate_latest(registry))

"""Merge the agents' results into one run result, losslessly, keeping each agent's own figures.

Histograms merge from their encoded form through the engine (the merged percentiles are those of
one histogram fed every sample); counts add up; timelines align by wall-clock second. An agent
that returned nothing (its worker died) or lost the target is listed with its reason, and the
run is marked partial; the others' figures are kept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from gauntlet import engine
from gauntlet.errors import GauntletError

Result = dict[str, Any]
CONNECT_ERRORS = ("connect_refused", "connect_timeout", "connect_error")
COUNTS = ("requests", "responses", "errors_total", "bytes_in", "bytes_out", "connections_opened")
#: The engine's order: a cancel outranks a duration, which outranks a request count.
STOP_REASONS = ("cancelled", "duration", "requests")


@dataclass
class AgentRun:
    """One slice of the plan on one Dask worker, and what came of it."""

    index: int
    address: str
    plan: engine.Plan
    #: The worker's clock minus the controller's, as measured before the run.
    clock_offset_us: int
    result: Result | None = None
    #: Why no result came back (the worker died, the task failed); None when one did.
    lost: str | None = None


def measure_start_unix_us(result: Result) -> int:
    """Wall-clock µs at which the agent's measured interval began: its agreed start (or its
    actual start when it began late; started_unix_ms is whole milliseconds), plus the warm-up."""
    plan = result["plan"]
    started_us = max(plan.get("start_at_unix_us") or 0, result["started_unix_ms"] * 1_000)
    return int(started_us + plan["warmup_us"])


def lost_target(result: Result) -> str | None:
    """Why an agent's last seconds say it could no longer reach the target: only connect errors,
    no response, until its end. None when it could."""
    timeline = result["timeline"]
    connect_errors = sum(result["errors"][kind] for kind in CONNECT_ERRORS)
    if not timeline or connect_errors == 0 or timeline[-1]["responses"] > 0:
        return None
    silent_from = len(timeline)
    while silent_from > 0 and timeline[silent_from - 1]["responses"] == 0:
        silent_from -= 1
    kinds = ", ".join(f"{kind} {result['errors'][kind]}" for kind in CONNECT_ERRORS if result["errors"][kind])
    return f"cannot reach the target from second {timeline[silent_from]['second']} to its end ({kinds})"


def agent_state(agent: AgentRun) -> tuple[str, str | None]:
    if agent.result is None:
        return "lost", agent.lost
    unreachable = lost_target(agent.result)
    if unreachable is not None:
        return "unreachable", unreachable
    if agent.result["partial"]:
        return "cancelled", "cancelled before the plan's end"
    return "completed", None


def merged_summary(histograms: list[str]) -> tuple[str, dict[str, Any]]:
    merged = engine.merge_histograms(histograms)
    return merged, engine.histogram_summary(merged)


#: A second's counts that add up over agents (users_active too: each agent's users are its own).
SECOND_COUNTS = (
    "requests", "responses", "errors", "bytes_in", "users_arrived", "users_active", "users_finished", "users_dropped",
    "pages", "page_errors",
)


def merge_timelines(results: list[Result], starts_us: list[int]) -> list[dict[str, Any]]:
    """Second k of an agent whose measurement began d seconds after the earliest one's is second
    k + d of the run (d rounded to whole seconds); each second's histograms merge."""
    earliest_us = min(starts_us)
    by_second: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for result, start_us in zip(results, starts_us, strict=True):
        shift = round((start_us - earliest_us) / 1_000_000)
        for entry in result["timeline"]:
            by_second[entry["second"] + shift].append(entry)
    timeline = []
    for second, entries in sorted(by_second.items()):
        histogram, summary = merged_summary([e["histogram"] for e in entries])
        timeline.append({
            "second": second,
            "span_us": max(e["span_us"] for e in entries),
            **{key: sum(e[key] for e in entries) for key in SECOND_COUNTS},
            "p50_us": summary["p50"], "p90_us": summary["p90"], "p99_us": summary["p99"], "max_us": summary["max"],
            "histogram": histogram,
            "errors_by_kind": dict(sum((Counter(e["errors_by_kind"]) for e in entries), Counter())),
        })
    return timeline


def sent_requests(result: Result) -> int:
    """Requests the agent started under a rate, from its achieved rate over its interval."""
    return round(float(result["schedule"]["achieved_rate_per_s"]) * int(result["elapsed_us"]) / 1_000_000)


def merge_schedule(results: list[Result], offered_rate_per_s: float, per_s: Any) -> dict[str, Any]:
    lag_histogram, lag = merged_summary([r["schedule"]["send_lag_histogram"] for r in results])
    return {
        "offered_rate_per_s": offered_rate_per_s,
        "achieved_rate_per_s": per_s(sum(sent_requests(r) for r in results)),
        "send_lag_us": lag,
        "send_lag_histogram": lag_histogram,
        "late_sends": sum(r["schedule"]["late_sends"] for r in results),
    }


def merge_pages(pages_of: list[dict[str, Any]]) -> dict[str, Any]:
    pages = {}
    for name, first in pages_of[0].items():
        views = [p[name] for p in pages_of]
        histogram, page_time = merged_summary([v["histogram"] for v in views])
        sums = {key: sum(v[key] for v in views) for key in ("count", "errors", "bytes_in", "good", "tolerable", "fail")}
        pages[name] = {"type": first["type"], "download": first["download"], **sums,
                       "page_time_us": page_time, "histogram": histogram}
    return pages


def merge_sessions(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts add up, page figures merge; phase k of each agent is phase k of the run."""
    totals = ("users_started", "users_completed", "users_dropped", "not_modified")
    phases = [
        {
            **{key: same[0][key] for key in ("start_us", "duration_us")},
            **{key: sum(p[key] for p in same) for key in ("users_per_s", "users_arrived", "users_finished", "users_dropped")},
            "pages": merge_pages([p["pages"] for p in same]),
        }
        for same in zip(*[s["phases"] for s in sessions], strict=True)
    ]
    return {
        **{key: sum(s[key] for s in sessions) for key in totals},
        "pages": merge_pages([s["pages"] for s in sessions]),
        "phases": phases,
    }


def merge_client(results: list[Result], requests: int) -> dict[str, Any]:
    cpu_us_measured = sum(r["client"]["cpu_us_per_request"] * r["requests"] for r in results)
    return {
        "cpu_us": sum(r["client"]["cpu_us"] for r in results),
        "cpu_us_per_request": cpu_us_measured / requests if requests else 0.0,
        "busiest_thread_share": max(r["client"]["busiest_thread_share"] for r in results),
        "cpu_wait_us": sum(r["client"]["cpu_wait_us"] for r in results),
        "busiest_thread_runnable_share": max(r["client"]["busiest_thread_runnable_share"] for r in results),
    }


def sum_keyed(dicts: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = defaultdict(int)
    for counts in dicts:
        for key, count in counts.items():
            total[key] += count
    return dict(sorted(total.items()))


def agent_entry(agent: AgentRun) -> dict[str, Any]:
    """The agent's slice and its own figures (null when it returned nothing)."""
    state, reason = agent_state(agent)
    sessions = agent.plan.get("sessions") or {}
    phases = sessions.get("phases")
    entry: dict[str, Any] = {
        "index": agent.index, "address": agent.address, "state": state, "reason": reason,
        "clock_offset_us": agent.clock_offset_us,
        "slice": {
            "connections": agent.plan["connections"], "threads": agent.plan["threads"],
            "requests": agent.plan.get("requests"), "rate_per_s": agent.plan.get("rate_per_s"),
            "users": sessions.get("users"), "users_per_s": [p["users_per_s"] for p in phases] if phases else None,
        },
    }
    figures = ("started_unix_ms", "elapsed_us", *COUNTS, "requests_per_s", "latency_us", "histogram",
               "service_histogram", "client")
    result = agent.result
    entry.update({key: None if result is None else result[key] for key in figures})
    schedule = result["schedule"] if result is not None else None
    entry["achieved_rate_per_s"] = schedule["achieved_rate_per_s"] if schedule else None
    return entry


def merge_results(plan: engine.Plan, start_at_unix_us: int, agents: list[AgentRun]) -> Result:
    """One result in the engine's format (run-result schema) for the whole plan, plus `agents`."""
    done = [a for a in agents if a.result is not None]
    if not done:
        why = "; ".join(f"{a.address}: {a.lost}" for a in agents)
        raise GauntletError(f"no agent returned a result ({why})", "Check the workers' logs and the target")
    results: list[Result] = [a.result for a in done]  # type: ignore[misc]
    starts_us = [measure_start_unix_us(r) for r in results]
    elapsed_us = max(s + r["elapsed_us"] for s, r in zip(starts_us, results, strict=True)) - min(starts_us)

    def per_s(count: float) -> float:
        return count * 1_000_000 / elapsed_us if elapsed_us else 0.0

    counts = {key: sum(r[key] for r in results) for key in COUNTS}
    histogram, latency = merged_summary([r["histogram"] for r in results])
    service_histogram, service_time = merged_summary([r["service_histogram"] for r in results])
    tls = [r["tls"] for r in results if r["tls"] is not None]
    entries = [agent_entry(a) for a in agents]
    return {
        "schema": results[0]["schema"],
        # The whole plan, with the defaults the engine filled in for the slices.
        "plan": {**results[0]["plan"], **plan, "start_at_unix_us": start_at_unix_us, "timeline_histograms": True},
        "address": results[0]["address"],
        "partial": any(e["state"] != "completed" for e in entries),
        "stop_reason": next(reason for reason in STOP_REASONS if any(r["stop_reason"] == reason for r in results)),
        "started_unix_ms": min(r["started_unix_ms"] for r in results),
        "elapsed_us": elapsed_us,
        "threads": sum(r["threads"] for r in results),
        "connections": plan["connections"],
        **counts,
        "errors": sum_keyed([r["errors"] for r in results]),
        "status_codes": sum_keyed([r["status_codes"] for r in results]),
        "requests_per_s": per_s(counts["responses"]),
        "bytes_in_per_s": per_s(counts["bytes_in"]),
        "latency_us": latency,
        "service_time_us": service_time,
        "histogram": histogram,
        "service_histogram": service_histogram,
        "schedule": merge_schedule(results, plan["rate_per_s"], per_s) if plan.get("rate_per_s") else None,
        "sessions": merge_sessions([r["sessions"] for r in results]) if plan.get("sessions") else None,
        "client": merge_client(results, counts["requests"]),
        "tls": {key: sum(t[key] for t in tls) for key in ("handshakes", "resumed")} if tls else None,
        "timeline": merge_timelines(results, starts_us),
        "agents": entries,
    }

"""Terminal tables of a run's result (rich)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from gauntlet.lab.record import CaseRecord
from gauntlet.report.labels import case_label
from gauntlet.units import format_bytes, format_count, format_duration_us

LATENCY_COLUMNS = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"), ("max", "max"))


def describe_plan(result: dict[str, Any]) -> str:
    plan = result["plan"]
    mode = "keep-alive"
    if not plan["keepalive"]:
        mode = "a new connection per request"
    elif plan["calls_per_connection"]:
        mode = f"{plan['calls_per_connection']} requests per connection"
    return (
        f"{plan['method']} {plan['url']}  ({result['address']}, HTTP/{plan['http_version']}, {mode})\n"
        f"{result['connections']} connections on {result['threads']} threads, "
        f"{format_duration_us(result['elapsed_us'])} measured, stopped by {result['stop_reason']}"
        + ("  [yellow]PARTIAL[/yellow]" if result["partial"] else "")
    )


def throughput_table(result: dict[str, Any]) -> Table:
    table = Table(title="Throughput", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    for column in ("requests/s", "transfer/s", "requests", "responses", "errors", "connections opened"):
        table.add_column(column, justify="right")
    table.add_row(
        format_count(result["requests_per_s"]),
        format_bytes(result["bytes_in_per_s"]) + "/s",
        format_count(result["requests"]),
        format_count(result["responses"]),
        format_count(result["errors_total"]),
        format_count(result["connections_opened"]),
    )
    return table


def latency_table(result: dict[str, Any]) -> Table:
    """Under a rate, latency counts from each request's due time and service time from its start.
    Without a single response there is no latency: the cells show '-', not 0."""
    columns = (("mean", "mean"), *LATENCY_COLUMNS)
    table = Table(title="Latency", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    rows = [("latency", result["latency_us"])]
    if result["schedule"] is not None:
        table.add_column("from")
        rows = [("due time", result["latency_us"]), ("actual send", result["service_time_us"])]
    for _, label in columns:
        table.add_column(label, justify="right")
    for name, summary in rows:
        cells = [format_duration_us(summary[key]) if summary["count"] else "-" for key, _ in columns]
        table.add_row(*([name] if result["schedule"] is not None else []), *cells)
    return table


def schedule_line(result: dict[str, Any]) -> str | None:
    """How well a constant rate was held, and what to do when it was not."""
    schedule = result["schedule"]
    if schedule is None:
        return None
    lag = schedule["send_lag_us"]
    line = (
        f"rate: offered {format_count(schedule['offered_rate_per_s'])}/s, "
        f"sent {format_count(schedule['achieved_rate_per_s'])}/s; send lag p99 {format_duration_us(lag['p99'])}, "
        f"max {format_duration_us(lag['max'])}; {format_count(schedule['late_sends'])} sends more than 1 ms late"
    )
    held = schedule["achieved_rate_per_s"] >= 0.98 * schedule["offered_rate_per_s"] and lag["p99"] <= 1_000
    if held:
        return line
    return (
        f"[yellow]{line}. The rate was NOT held: every connection was busy or the client saturated; "
        "latency still counts from the due times. Use more connections (-c) or a lower rate[/yellow]"
    )


def outcomes_table(result: dict[str, Any]) -> Table:
    table = Table(title="Outcomes", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    table.add_column("outcome")
    table.add_column("count", justify="right")
    for code, count in sorted(result["status_codes"].items()):
        table.add_row(f"status {code}", format_count(count), style=None if code.startswith(("2", "3")) else "yellow")
    for kind, count in result["errors"].items():
        if count:
            table.add_row(f"error {kind}", format_count(count), style="red")
    return table


def print_run(console: Console, result: dict[str, Any]) -> None:
    console.print(describe_plan(result))
    console.print(throughput_table(result))
    if result["tls"] is not None:
        tls = result["tls"]
        console.print(f"tls: {format_count(tls['handshakes'])} handshakes, {format_count(tls['resumed'])} resumed")
    client = result["client"]
    console.print(
        f"client: {client['cpu_us_per_request']:.1f} µs of CPU per request, "
        f"busiest load thread {client['busiest_thread_share']:.0%} busy"
    )
    if "server" in result:
        server = result["server"]
        memory = ", ".join(
            f"{role} {m['processes']}x {format_bytes(m['rss_bytes'])} RSS" for role, m in sorted(server["memory"].items())
        )
        console.print(
            f"server: {server['cpu_us_per_request']:.1f} µs of CPU per request, "
            f"{server['context_switches_per_request']:.2f} context switches and "
            f"{server['page_faults_per_request']:.3f} page faults per request; {memory}"
        )
    console.print(latency_table(result))
    line = schedule_line(result)
    if line is not None:
        console.print(line)
    console.print(outcomes_table(result))


SWEEP_COLUMNS = {
    "concurrency": ("level", "req/s", "p50", "p99", "failed", "timed out", "requests"),
    "rate": ("offered/s", "sent/s", "replies/s", "p50", "p99", "errors", "requests"),
}
SWEEP_WIDTHS = (10, 10, 11, 10, 10, 10, 10)


def _fixed(cells: tuple[str, ...] | list[str]) -> str:
    return "".join(cell.rjust(width) for cell, width in zip(cells, SWEEP_WIDTHS, strict=True))


def sweep_header(kind: str) -> str:
    return _fixed(SWEEP_COLUMNS[kind])


def sweep_row(kind: str, step: Any) -> str:
    """One printed line per step, as it ends (a table that grows while the sweep runs)."""
    value = format_count(step.value)
    if step.result is None:
        return f"{value.rjust(SWEEP_WIDTHS[0])}  refused: {step.refused}"
    result = step.result
    latency = result["latency_us"]

    def share(count: int) -> str:
        return f"{count / result['requests']:.1%}" if result["requests"] else "-"

    timed_out = result["errors"]["timeout"] + result["errors"]["connect_timeout"]
    rate = format_count(result["requests_per_s"])
    if kind == "concurrency":
        cells = [value, rate, format_duration_us(latency["p50"]), format_duration_us(latency["p99"]),
                 share(result["errors_total"]), share(timed_out), format_count(result["requests"])]
    else:
        sent = format_count(result["schedule"]["achieved_rate_per_s"])
        cells = [value, sent, rate, format_duration_us(latency["p50"]), format_duration_us(latency["p99"]),
                 format_count(result["errors_total"]), format_count(result["requests"])]
    suffix = "  (partial)" if result["partial"] else ""
    return _fixed(cells) + suffix


def case_line(record: CaseRecord) -> str:
    """One line per finished case of a suite: what ran, and its headline figures or why it has none."""
    label = case_label(record.params) + (f"  #{record.repeat + 1}" if record.repeat else "")
    result = record.result
    if result is None:
        return f"{label}  [red]{record.error}[/red]"
    figures = (
        f"{format_count(result['requests_per_s'])} req/s  p99 {format_duration_us(result['latency_us']['p99'])}  "
        f"{format_count(result['errors_total'])} errors"
    )
    if "qos" in result:
        figures += "  QoS " + ("[green]valid[/green]" if result["qos"]["valid"] else "[red]invalid[/red]")
    if record.labels:
        figures += f"  [yellow]{', '.join(record.labels)}[/yellow]"
    return f"{label}  {figures}" + ("  [yellow](partial)[/yellow]" if result["partial"] else "")

"""Terminal tables of a run's result (rich)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gauntlet.analysis.bottleneck import failing_statuses, format_link, rate_held
from gauntlet.analysis.invariants import breach_reasons
from gauntlet.analysis import stats
from gauntlet.model.record import CaseRecord
from gauntlet.report.labels import case_label
from gauntlet.units import format_bytes, format_count, format_duration_us

if TYPE_CHECKING:
    from gauntlet.report import views
    from gauntlet.store import Store

LATENCY_COLUMNS = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"), ("max", "max"))


def negotiated_text(negotiated: dict[str, Any]) -> str:
    """'h2, 10 streams/conn, TLS 1.3 TLS13_AES_256_GCM_SHA384': what the run spoke."""
    parts = [negotiated["protocol"]]
    if negotiated["protocol"] == "h2":
        parts.append(f"{negotiated['streams_per_connection']} streams/conn")
    if negotiated["tls_version"] is not None:
        parts.append(f"TLS {negotiated['tls_version']} {negotiated['tls_cipher']}")
    return ", ".join(parts)


def describe_plan(result: dict[str, Any]) -> str:
    plan = result["plan"]
    mode = "keep-alive"
    if not plan["keepalive"]:
        mode = "a new connection per request"
    elif plan["calls_per_connection"]:
        mode = f"{plan['calls_per_connection']} requests per connection"
    return (
        f"{plan['method']} {plan['url']}  ({result['address']}, {negotiated_text(result['negotiated'])}, {mode})\n"
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
    Without a single response there is no latency: the cells show '-', not 0; a percentile on too
    few responses shows stats.TOO_FEW (p99 needs 1,000)."""
    columns = (("mean", "mean"), *LATENCY_COLUMNS)
    table = Table(title="Latency", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    rows = [("latency", result["latency_us"])]
    if result["schedule"] is not None:
        table.add_column("from")
        rows = [("due time", result["latency_us"]), ("actual send", result["service_time_us"])]
    for _, label in columns:
        table.add_column(label, justify="right")
    for name, summary in rows:
        cells = [_latency_cell(summary, key) for key, _ in columns]
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
    if rate_held(schedule):
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
    for stage, pending in unanswered_stages(result):
        label = f"unanswered, {stage.replace('_', ' ')} (max age {format_duration_us(pending['max_age_us'])})"
        table.add_row(label, format_count(pending["count"]), style="yellow")
    schedule = result["schedule"]
    if schedule is not None and schedule["unsent"]:
        table.add_row("due and never sent (in the latency)", format_count(schedule["unsent"]), style="yellow")
    for key in ("connects_refused", "connects_failed"):
        if result[key]:
            table.add_row(key.replace("_", " "), format_count(result[key]), style="red")
    if result.get("goaway_resent"):
        table.add_row("sent again after a graceful GOAWAY (not errors)", format_count(result["goaway_resent"]), style="dim")
    if result.get("stale_resent"):
        label = "sent again after a stale keep-alive connection (not errors)"
        table.add_row(label, format_count(result["stale_resent"]), style="dim")
    if result.get("unsolicited"):
        label = f"unsolicited: bytes no request asked for ({format_bytes(result['unsolicited_bytes'])}; not errors)"
        table.add_row(label, format_count(result["unsolicited"]), style="yellow")
    return table


def unanswered_stages(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Requests without an answer when the measured interval ended, by the stage they were in."""
    unanswered = result["unanswered"]
    return [(stage, unanswered[stage]) for stage in ("connecting", "tls_handshake", "awaiting_response")
            if unanswered[stage]["count"]]


def setup_line(result: dict[str, Any]) -> str | None:
    """What ran, when Gauntlet started the server: `nginx 1.22.1, 2 processes, php-fpm 8.2.28, HTTPS
    TLSv1.3 TLS13_AES_256_GCM_SHA384, config sha256 1a2b3c4d5e6f (1,234 bytes)`."""
    setup = result.get("server_setup")
    if setup is None:
        return None
    parts = [f"{setup['kind']} {setup['version'] or '(version unknown)'}"]
    if setup["workers"] is not None:
        parts.append(worker_count(setup["workers"], setup["worker_unit"]))
    if setup["backend"] is not None:
        parts.append(f"{setup['backend']} {setup['backend_version'] or ''}".rstrip())
    if setup["tls"]:
        negotiated = result.get("negotiated") or {}
        agreed = " ".join(v for v in (negotiated.get("tls_version"), negotiated.get("tls_cipher")) if v)
        parts.append(f"HTTPS {agreed}".rstrip())
    parts.append(f"config sha256 {setup['config_sha256'][:12]} ({setup['config_bytes']:,} bytes)")
    return "ran: " + ", ".join(parts) + limits_text(result)


def worker_count(workers: int, unit: str) -> str:
    """`2 processes`, `1 process`, `1 thread (GOMAXPROCS)`: the unit's first word agrees with the count."""
    if workers == 1:
        noun, _, rest = unit.partition(" ")
        noun = noun.removesuffix("es") if noun.endswith("sses") else noun.removesuffix("s")
        unit = f"{noun} {rest}".rstrip()
    return f"{workers:,} {unit}"


def limits_text(result: dict[str, Any]) -> str:
    """This machine's limits that stopped the server short of the run's connections, a line each."""
    limits = (result.get("server_setup") or {}).get("limits") or []
    return "".join(f"\n[yellow]limit: {line}[/yellow]" for line in limits)


def print_run(console: Console, result: dict[str, Any]) -> None:
    console.print(describe_plan(result))
    line = setup_line(result)
    if line is not None:
        console.print(line, highlight=False, soft_wrap=True)
    if "server_exit" in result:  # the figures run past the exit: no headline
        console.print(f"[bold red]{result['server_exit']['message']}[/bold red]: no throughput is shown, the case is an error")
    else:
        console.print(throughput_table(result))
    if result["tls"] is not None:
        tls = result["tls"]
        console.print(f"tls: {format_count(tls['handshakes'])} handshakes, {format_count(tls['resumed'])} resumed")
    client = result["client"]
    console.print(
        f"client: {client['cpu_us_per_request']:.1f} µs of CPU per request, "
        f"busiest load thread {client['busiest_thread_share']:.0%} busy{memory_words(result.get('memory'))}"
        f"{window_words(client)}"
    )
    if result.get("idle") is not None:
        console.print(idle_line(result["idle"]), highlight=False)
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
    if "bottleneck" in result:
        for line in bottleneck_lines(result["bottleneck"]):
            console.print(line, highlight=False)
    for reason in breach_reasons(result["invariants"]) if "invariants" in result else []:
        console.print(Text.assemble(("breaks ", "bold red"), reason))


def window_words(client: dict[str, Any]) -> str:
    """The batch window the measured interval ran with, and what the warm-up's trial measured when
    it decided (medians over its pairs of spans, with the window over without)."""
    window_us = client.get("io_batch_us", 0)
    words = f", batch window {format_duration_us(window_us)}" if window_us else ", no batch window"
    trial = client.get("batch_trial")
    if trial is None:
        return words if window_us else ""
    tried = f"the warm-up's trial of {format_duration_us(trial['window_us'])}"
    if trial["responses_ratio"] is None:
        return f"{words} ({tried} saw a span without responses)"
    return f"{words} ({tried}: {trial['responses_ratio']:.2f}x the responses at {trial['cpu_ratio']:.2f}x the CPU per response)"


def memory_words(memory: dict[str, Any] | None) -> str:
    """The engine's resident set grown per connection, when it was measured."""
    if memory is None or not memory["connections"]:
        return ""
    return f", {format_bytes(round(memory['bytes_per_connection']))} of memory per connection"


def idle_line(idle: dict[str, Any]) -> str:
    """The idle connections: how many were held to the end, how many the server closed."""
    failed = sum(idle["connect_errors"].values())
    sent = f", {format_bytes(idle['bytes_out'])} sent slowly" if idle["bytes_out"] else ""
    return (
        f"idle: {format_count(idle['open_at_end'])} of {format_count(idle['connections'])} connections held to the end, "
        f"{format_count(idle['closed_by_server'])} closed by the server, {format_count(failed)} failed to connect{sent}"
    )


def bottleneck_lines(bottleneck: dict[str, Any]) -> list[str]:
    """What bounded the result, each label with its reason; then the bandwidth ceiling."""
    lines = [f"[bold yellow]{label}[/bold yellow]: {bottleneck['reasons'][label]}" for label in bottleneck["labels"]]
    if not lines:
        lines.append("[green]no bottleneck[/green]: nothing was saturated, no error share or schedule was missed")
    ceiling = bottleneck["bandwidth_ceiling_per_s"]
    if ceiling is None:
        lines.append(f"[dim]bandwidth ceiling: {unmeasured_path_words(bottleneck.get('path'))}[/dim]")
    elif "bandwidth-bound" not in bottleneck["labels"]:
        link = format_link(bottleneck["link_bits_per_s"])
        lines.append(f"[dim]bandwidth ceiling: {format_count(ceiling)} requests/s on the {link} link[/dim]")
    machine = bottleneck.get("machine")
    if machine is not None and not machine["busy"]:
        lines.append(f"[dim]other work: {machine['other_cpu_share']:.1%} of the machine's {machine['cores']} cores[/dim]")
    return lines


def unmeasured_path_words(path: dict[str, Any] | None) -> str:
    """Why there is no ceiling without --link: the path is loopback, or a network path whose speed
    is not measured (named by its interfaces and who took them); `path` is None in results stored
    before the path was recorded."""
    declare = "declare a link with --link 1gbit"
    if path is None:
        return f"none ({declare})"
    if path["loopback"]:
        return f"not applicable (loopback; {declare})"
    by_interface: dict[str, list[str]] = {}
    for route in path["routes"]:
        interface = route["interface"] or "an interface not found"
        by_interface.setdefault(f"{route['target']} via {interface}", []).append(route["origin"])
    ways = "; ".join(f"{way} from {', '.join(origins)}" for way, origins in by_interface.items())
    return f"not measured (path to {ways}; {declare})"


def _latency_cell(summary: dict[str, Any], key: str) -> str:
    if not summary["count"]:
        return "-"
    if key != "mean" and not stats.percentile_shown(key, summary["count"]):
        return stats.TOO_FEW
    return format_duration_us(summary[key])


ESTIMATE_ROWS = (
    ("requests/s", "requests_per_s", format_count),
    ("latency p50", "latency_p50_us", format_duration_us),
    ("latency p99", "latency_p99_us", format_duration_us),
    ("client CPU/request", "client_cpu_us_per_request", lambda us: f"{us:.1f} µs"),
    ("server CPU/request", "server_cpu_us_per_request", lambda us: f"{us:.1f} µs"),
)


def estimates_table(estimates: dict[str, dict[str, Any]], repeats: int) -> Table:
    """Each headline figure's median over the repeats and its 95 % interval (analysis.stats), from
    repeats_json's `estimates`; a percentile on too few responses is left out of them and says so."""
    table = Table(title=f"Over {repeats} repeats", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    for column in ("figure", "median", "95 % interval", "from"):
        table.add_column(column, justify="left" if column in ("figure", "from") else "right")
    for label, key, shown in ESTIMATE_ROWS:
        found = estimates.get(key)
        if found is None:
            if key.startswith("latency_p"):
                table.add_row(label, stats.TOO_FEW, "", f"needs {stats.min_responses(key):,} responses a repeat")
            continue
        interval = f"{shown(found['low'])} - {shown(found['high'])}" if found["low"] != found["high"] else "-"
        table.add_row(label, shown(found["point"]), interval, found["method"])
    return table


def repeat_line(index: int, count: int, result: dict[str, Any]) -> str:
    """One line per repeat, as it ends."""
    labels = ", ".join(result["bottleneck"]["labels"]) or "no bottleneck"
    p99 = _latency_cell(result["latency_us"], "p99")
    return f"repeat {index + 1} of {count}: {format_count(result['requests_per_s'])} requests/s, p99 {p99}; {labels}"


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
        cells = [value, rate, _latency_cell(latency, "p50"), _latency_cell(latency, "p99"),
                 share(result["errors_total"]), share(timed_out), format_count(result["requests"])]
    else:
        sent = format_count(result["schedule"]["achieved_rate_per_s"])
        cells = [value, sent, rate, _latency_cell(latency, "p50"), _latency_cell(latency, "p99"),
                 format_count(result["errors_total"]), format_count(result["requests"])]
    suffix = "  (partial)" if result["partial"] else ""
    if step.repeats is not None and len(step.repeats.measurements) > 1:
        rate_estimate = stats.headline_estimates(step.repeats.results)["requests_per_s"]
        interval = rate_estimate.text(format_count) if rate_estimate.has_interval else "no interval"
        suffix += f"  {len(step.repeats.measurements)} repeats, req/s {interval}"
    if "bottleneck" in result and result["bottleneck"]["labels"]:
        suffix += "  " + ", ".join(result["bottleneck"]["labels"])
    return _fixed(cells) + suffix


def case_line(record: CaseRecord) -> str:
    """One line per finished case of a suite: what ran, and its headline figures or why it has none."""
    label = case_label(record.params, record.repeat)
    result = record.result
    if result is None or record.error is not None:
        unnamed = [name for name in record.labels if name not in (record.error or "")]
        return f"{label}  [red]{record.error}[/red]" + (f"  [yellow]{', '.join(unnamed)}[/yellow]" if unnamed else "")
    figures = (
        f"{format_count(result['requests_per_s'])} req/s  p99 {_latency_cell(result['latency_us'], 'p99')}  "
        f"{format_count(result['errors_total'])} errors"
    )
    if bad := failing_statuses(result):
        figures += f"  {format_count(bad)} non-2xx/3xx"
    if "qos" in result:
        figures += "  QoS " + ("[green]valid[/green]" if result["qos"]["valid"] else "[red]invalid[/red]")
    if record.labels:
        figures += f"  [yellow]{', '.join(record.labels)}[/yellow]"
    if record.breaches:
        figures += f"  [bold red]breaks {', '.join(record.breaches)}[/bold red]"
    return f"{label}  {figures}" + ("  [yellow](partial)[/yellow]" if result["partial"] else "") + limits_text(result)


#: Text columns (case names) give way to figures on a narrow terminal, down to this width.
TEXT_MIN_WIDTH = 16


def _widest(table: views.Table, column: views.Column) -> int:
    index = table.columns.index(column)
    return max([len(column.name), *(len(row[index]) for row in table.rows)])


def rich_table(table: views.Table) -> Table:
    """One of the report's tables for the terminal; cells as Text, so no stored string is read as markup."""
    shown = Table(
        title=table.title, title_justify="left", box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, collapse_padding=True
    )
    for column in table.columns:
        if column.numeric:
            shown.add_column(column.name, justify="right", no_wrap=True)
        else:
            shown.add_column(column.name, overflow="fold", ratio=1, min_width=min(TEXT_MIN_WIDTH, _widest(table, column)))
    for row in table.rows:
        shown.add_row(*(Text(cell) for cell in row))
    return shown


def markdown_table(table: views.Table) -> str:
    """One of the report's tables as a Markdown (GitHub) table, for docs; a '|' in a cell escaped."""
    lines = ["| " + " | ".join(column.name for column in table.columns) + " |"]
    lines.append("| " + " | ".join("---:" if column.numeric else "---" for column in table.columns) + " |")
    lines += ["| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in row) + " |" for row in table.rows]
    return "\n".join(lines)


def print_summary(console: Console, store: Store, *run_ids: int) -> None:
    """Stored runs as the HTML report's headline shows them (`gauntlet suite run` prints it at the end)."""
    # Imported here: `gauntlet run` prints the tables above without the store or the report's views.
    from gauntlet.report.points import grid_points
    from gauntlet.report.specweb import specweb_table
    from gauntlet.report.verdicts import verdicts_table
    from gauntlet.report.views import SUMMARY_TABLES, run_line, tables

    for run_id in run_ids:
        console.print(Text(run_line(store.run(run_id))))
    points = grid_points(store.cases(list(run_ids)), by_run=len(run_ids) > 1)
    if not points:
        console.print("no case stored yet")
        return
    floors = store.noise_floors()
    for table in tables(points, (partial(verdicts_table, floors=floors), *SUMMARY_TABLES, specweb_table)):
        console.print(rich_table(table))

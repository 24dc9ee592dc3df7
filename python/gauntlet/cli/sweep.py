"""`gauntlet sweep concurrency|rate`: one measurement per level or per offered rate."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from gauntlet import host
from gauntlet.analysis.bottleneck import DEFAULT_ERROR_SHARE
from gauntlet.cli import measuring
from gauntlet.cli.agent_options import Agents, Scheduler, load_runner
from gauntlet.cli.progress import ProgressLine
from gauntlet.cli.run import EXIT_INTERRUPTED, build_plan, plan_options, target_url, write_json
from gauntlet.lab.measure import Settings
from gauntlet.lab.sweep import Sweep, concurrency_levels, offered_rates, run_sweep
from gauntlet.report.output import console
from gauntlet.report.tables import sweep_header, sweep_row

app = typer.Typer(help="One measurement per concurrency level or per offered rate.", no_args_is_help=True)

Url = Annotated[str | None, typer.Argument(help="http://HOST[:PORT]/PATH; without it, the built-in server")]
Threads = Annotated[int, typer.Option("-t", "--threads", help="Load threads")]
JsonPath = Annotated[Path | None, typer.Option("--json", help="Every step's result, rewritten after each step")]


def run_steps(
    kind: str, url: str | None, plans: Sequence[tuple[float, dict]], threads: int, json_path: Path | None, settings: Settings,
    agents: int | None, scheduler: str | None,
) -> int:
    out, err = console(), console(stderr=True)
    printed = 0
    environment = host.snapshot_after_load()

    def show(sweep: Sweep) -> None:
        nonlocal printed
        if json_path is not None:
            write_json(json_path, {**sweep.to_json(), "environment": environment()})
        for step in sweep.steps[printed:]:
            out.print(sweep_row(kind, step), highlight=False, soft_wrap=True)
        printed = len(sweep.steps)

    with load_runner(agents, scheduler) as runner, target_url(url, threads, err) as target:
        out.print(sweep_header(kind), highlight=False)
        with ProgressLine(err, None, None) as progress:
            sweep = run_sweep(kind, plans, target, settings, show, progress.update, runner)
    if sweep.interrupted:
        err.print("[yellow]interrupted: the steps above were measured; the last one is partial[/yellow]")
        return EXIT_INTERRUPTED
    return 0


@app.command("concurrency")
def concurrency_command(
    url: Url = None,
    levels: Annotated[str, typer.Option("--levels", help="1,10,100,... or 200..4000:200")] = "1,10,100,250,500,1000",
    requests: Annotated[str | None, typer.Option("-n", "--requests", help="Requests per level")] = None,
    duration: Annotated[str | None, typer.Option("-d", "--duration", help="Time per level (default 10s)")] = None,
    timeout: Annotated[str, typer.Option("--timeout", help="Per-request timeout")] = "15s",
    no_keepalive: Annotated[bool, typer.Option("--no-keepalive", help="A new connection per request")] = False,
    threads: Threads = 2,
    json_path: JsonPath = None,
    repeat: measuring.Repeat = 1,
    restart_between: measuring.RestartBetween = False,
    warmup_requests: measuring.WarmupRequests = None,
    link: measuring.Link = None,
    error_share: measuring.ErrorShare = DEFAULT_ERROR_SHARE,
    agents: Agents = None,
    scheduler: Scheduler = None,
) -> int:
    """Throughput, latency and failed/timed-out shares at each concurrency level (ab-style)."""
    options = dict(requests=requests, duration=duration, timeout=timeout, no_keepalive=no_keepalive)
    plans = [
        (level, build_plan("", plan_options(connections=level, threads=min(threads, level), **options)))
        for level in concurrency_levels(levels)
    ]
    settings = measuring.settings(repeat, restart_between, warmup_requests, link, error_share)
    return run_steps("concurrency", url, plans, threads, json_path, settings, agents, scheduler)


@app.command("rate")
def rate_command(
    url: Url = None,
    low: Annotated[float, typer.Option("--from", help="First offered rate, requests/s")] = 1000,
    high: Annotated[float, typer.Option("--to", help="Last offered rate, requests/s")] = 5000,
    step: Annotated[float, typer.Option("--step", help="Rate increment, requests/s")] = 1000,
    calls_per_connection: Annotated[
        int | None, typer.Option("--calls-per-connection", min=1, help="K requests per connection, then reconnect")
    ] = None,
    duration: Annotated[str, typer.Option("-d", "--duration", help="Time per rate")] = "10s",
    connections: Annotated[int, typer.Option("-c", "--connections", help="Connections available")] = 100,
    timeout: Annotated[str, typer.Option("--timeout", help="Per-request timeout")] = "15s",
    threads: Threads = 2,
    json_path: JsonPath = None,
    repeat: measuring.Repeat = 1,
    restart_between: measuring.RestartBetween = False,
    warmup_requests: measuring.WarmupRequests = None,
    link: measuring.Link = None,
    error_share: measuring.ErrorShare = DEFAULT_ERROR_SHARE,
    agents: Agents = None,
    scheduler: Scheduler = None,
) -> int:
    """Replies/s, latency and errors at each offered rate (httperf/autobench-style)."""
    options = dict(
        duration=duration, timeout=timeout, connections=connections, threads=threads,
        calls_per_connection=calls_per_connection,
    )
    plans = [(rate, build_plan("", plan_options(rate=rate, **options))) for rate in offered_rates(low, high, step)]
    settings = measuring.settings(repeat, restart_between, warmup_requests, link, error_share)
    return run_steps("rate", url, plans, threads, json_path, settings, agents, scheduler)

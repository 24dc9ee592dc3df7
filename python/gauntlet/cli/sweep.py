"""`gauntlet sweep concurrency|rate`: one measurement per level or per offered rate."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gauntlet import host
from gauntlet.analysis.bottleneck import DEFAULT_ERROR_SHARE
from gauntlet.analysis.thresholds import Threshold, parse_thresholds
from gauntlet.cli import measuring, watching
from gauntlet.cli.agent_options import Agents, Scheduler, load_runner
from gauntlet.cli.progress import ProgressLine
from gauntlet.cli.load_options import LoadOptions
from gauntlet.bounds import CONNECTIONS, DURATION, RATE, REQUESTS
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, Http2Option, NoStoreOption, StreamsOption, bounded, store_path
from gauntlet.cli.run import (
    DEFAULT_PATH,
    EXIT_INTERRUPTED,
    CallsOption,
    ServerOption,
    ThreadsOption,
    TimeoutOption,
    WorkersOption,
    announce_stored,
    server_spec,
    target_url,
    write_json,
)
from gauntlet.lab.measure import Settings
from gauntlet.lab.observers import Observer
from gauntlet.lab.stored import StoredRun, command_params
from gauntlet.lab.sweep import Step, Sweep, concurrency_levels, offered_rates, run_sweep
from gauntlet.model.record import CaseRecord
from gauntlet.plan import DEFAULT_DURATION_US, DEFAULT_THREADS, Plan
from gauntlet.report.output import console
from gauntlet.report.tables import sweep_header, sweep_row
from gauntlet.servers.sizing import for_connections
from gauntlet.servers.spec import ServerSpec
from gauntlet.units import format_count

if TYPE_CHECKING:
    from gauntlet.servers.base import ServerInstance

app = typer.Typer(help="One measurement per concurrency level or per offered rate.", no_args_is_help=True)

Url = Annotated[str | None, typer.Argument(help="http://HOST[:PORT]/PATH; without it, the built-in server")]
JsonPath = Annotated[Path | None, typer.Option("--json", help="Every step's result, rewritten after each step")]


def run_steps(
    kind: str, url: str | None, spec: ServerSpec | None, plans: Sequence[tuple[float, Plan]], threads: int,
    json_path: Path | None, settings: Settings, agents: int | None, scheduler: str | None, db: Path | None,
    thresholds: list[Threshold], observers: list[Observer],
) -> int:
    """Each plan on `url`, or on the server `spec` names (None with a URL); exit 1 when a step's
    repeat crosses one of the `thresholds` (--fail-on)."""
    if spec is not None:
        spec = for_connections(spec, max(plan.all_connections() for _, plan in plans))
    out, err = console(), console(stderr=True)
    printed = stored_steps = 0
    environment = host.snapshot_after_load()

    def step_params(plan: Plan) -> dict[str, Any]:
        return command_params("sweep", url, spec, DEFAULT_PATH, plan)

    params = {value: step_params(plan) for value, plan in plans}
    options = {"kind": kind, "plans": [plan.engine_json() for _, plan in plans], "settings": asdict(settings)}

    with StoredRun(db, "sweep", options, environment, len(plans) * settings.repeats, observers, step_params) as stored:

        def show(sweep: Sweep) -> None:
            nonlocal printed, stored_steps
            if json_path is not None:
                write_json(json_path, {**sweep.to_json(), "environment": environment()})
            for step in sweep.steps[stored_steps:]:
                store_step(stored, params[step.value], step, target.server)
            stored_steps = len(sweep.steps)
            for step in sweep.steps[printed:]:
                out.print(sweep_row(kind, step), highlight=False, soft_wrap=True)
            printed = len(sweep.steps)

        with load_runner(agents, scheduler) as runner, target_url(url, threads, err, spec, http2=plans[0][1].http_version == "2") as target:
            out.print(sweep_header(kind), highlight=False)
            with ProgressLine(err, None, None) as progress:
                sweep = run_sweep(kind, plans, target, settings, show, progress.update, runner)
        stored.status = "interrupted" if sweep.interrupted else "complete"
    announce_stored(err, stored, db)
    if sweep.interrupted:
        err.print("[yellow]interrupted: the steps above were measured; the last one is partial[/yellow]")
        return EXIT_INTERRUPTED
    measured = [(f"{kind} {format_count(step.value)}", result) for step in sweep.steps if step.repeats for result in step.repeats.results]
    return measuring.fail_on(thresholds, [result for _, result in measured], [label for label, _ in measured])


def store_step(stored: StoredRun, params: dict[str, Any], step: Step, server: ServerInstance | None) -> None:
    """Each repeat of a step as a case; a step the engine refused as a case with its reason."""
    if step.repeats is None:
        now_ms = time.time_ns() // 1_000_000
        stored.add(CaseRecord(params, error=step.refused, started_unix_ms=now_ms, ended_unix_ms=now_ms))
        return
    for repeat, measurement in enumerate(step.repeats.measurements):
        stored.add_measurement(params, measurement, repeat, server)


@app.command("concurrency")
def concurrency_command(
    url: Url = None,
    levels: Annotated[str, typer.Option("--levels", help="1,10,100,... or 200..4000:200")] = "1,10,100,250,500,1000",
    requests: Annotated[int | None, bounded(REQUESTS, "-n", "--requests", help="Requests per level")] = None,
    duration_us: Annotated[int | None, bounded(DURATION, "-d", "--duration", help="Time per level (default 10s)")] = None,
    timeout_us: TimeoutOption = None,
    no_keepalive: Annotated[bool, typer.Option("--no-keepalive", help="A new connection per request")] = False,
    http2: Http2Option = False,
    streams: StreamsOption = None,
    threads: ThreadsOption = DEFAULT_THREADS,
    server: ServerOption = None,
    workers: WorkersOption = None,
    json_path: JsonPath = None,
    repeat: measuring.Repeat = 1,
    restart_between: measuring.RestartBetween = False,
    warmup_requests: measuring.WarmupRequests = None,
    link: measuring.Link = None,
    error_share: measuring.ErrorShare = DEFAULT_ERROR_SHARE,
    fail_on: measuring.FailOnGiven = None,
    agents: Agents = None,
    scheduler: Scheduler = None,
    db: DbOption = DEFAULT_DB_PATH,
    no_store: NoStoreOption = False,
    out: watching.Out = None,
    live: watching.Live = None,
) -> int:
    """Throughput, latency and failed/timed-out shares at each concurrency level (ab-style)."""
    thresholds = parse_thresholds(fail_on, default=())
    plans = [
        (level, LoadOptions(level, threads, requests, duration_us, timeout_us=timeout_us, no_keepalive=no_keepalive,
                            http2=http2, streams=streams).plan(""))
        for level in concurrency_levels(levels)
    ]
    settings = measuring.settings(repeat, restart_between, warmup_requests, link, error_share)
    spec = server_spec(url, server, {"workers": workers}, False, DEFAULT_PATH, not no_keepalive, threads, http2=http2)
    return run_steps(
        "concurrency", url, spec, plans, threads, json_path, settings, agents, scheduler, store_path(db, no_store), thresholds,
        watching.observers(out, live, "sweep"),
    )


@app.command("rate")
def rate_command(
    url: Url = None,
    low: Annotated[float, bounded(RATE, "--from", help="First offered rate, requests/s")] = 1000,
    high: Annotated[float, bounded(RATE, "--to", help="Last offered rate, requests/s")] = 5000,
    step: Annotated[float, bounded(RATE, "--step", help="Rate increment, requests/s")] = 1000,
    calls_per_connection: CallsOption = None,
    duration_us: Annotated[int, bounded(DURATION, "-d", "--duration", help="Time per rate", show_default="10s")] = DEFAULT_DURATION_US,
    connections: Annotated[int, bounded(CONNECTIONS, "-c", "--connections", help="Connections available")] = 100,
    timeout_us: TimeoutOption = None,
    http2: Http2Option = False,
    streams: StreamsOption = None,
    threads: ThreadsOption = DEFAULT_THREADS,
    server: ServerOption = None,
    workers: WorkersOption = None,
    json_path: JsonPath = None,
    repeat: measuring.Repeat = 1,
    restart_between: measuring.RestartBetween = False,
    warmup_requests: measuring.WarmupRequests = None,
    link: measuring.Link = None,
    error_share: measuring.ErrorShare = DEFAULT_ERROR_SHARE,
    fail_on: measuring.FailOnGiven = None,
    agents: Agents = None,
    scheduler: Scheduler = None,
    db: DbOption = DEFAULT_DB_PATH,
    no_store: NoStoreOption = False,
    out: watching.Out = None,
    live: watching.Live = None,
) -> int:
    """Replies/s, latency and errors at each offered rate (httperf/autobench-style)."""
    thresholds = parse_thresholds(fail_on, default=())
    plans = [
        (rate, LoadOptions(connections, threads, duration_us=duration_us, rate_per_s=rate,
                           calls_per_connection=calls_per_connection, timeout_us=timeout_us, http2=http2, streams=streams).plan(""))
        for rate in offered_rates(low, high, step)
    ]
    settings = measuring.settings(repeat, restart_between, warmup_requests, link, error_share)
    spec = server_spec(url, server, {"workers": workers}, False, DEFAULT_PATH, True, threads, http2=http2)
    return run_steps(
        "rate", url, spec, plans, threads, json_path, settings, agents, scheduler, store_path(db, no_store), thresholds,
        watching.observers(out, live, "sweep"),
    )

"""`gauntlet sweep concurrency|rate`: one measurement per level or per offered rate."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gauntlet import host
from gauntlet.analysis.thresholds import parse_thresholds
from gauntlet.cli import measuring, watching
from gauntlet.cli.agent_options import load_runner
from gauntlet.cli.progress import ProgressLine
from gauntlet.cli.load_options import LoadOptions
from gauntlet.bounds import CONNECTIONS, DURATION, RATE, REQUESTS
from gauntlet.cli.measuring import Measuring
from gauntlet.cli.options import Http2Option, StreamsOption, bounded, with_options
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
from gauntlet.lab.stored import StoredRun, command_params
from gauntlet.lab.sweep import Step, Sweep, concurrency_levels, offered_rates, run_sweep
from gauntlet.model.record import CaseRecord
from gauntlet.plan import DEFAULT_DURATION_US, DEFAULT_THREADS, Plan
from gauntlet.report.output import console
from gauntlet.report.tables import sweep_header, sweep_row
from gauntlet.servers.sizing import for_connections
from gauntlet.units import format_count

if TYPE_CHECKING:
    from gauntlet.servers.base import ServerInstance

app = typer.Typer(help="One measurement per concurrency level or per offered rate.", no_args_is_help=True)

Url = Annotated[str | None, typer.Argument(help="http://HOST[:PORT]/PATH; without it, the built-in server")]
JsonPath = Annotated[Path | None, typer.Option("--json", help="Every step's result, rewritten after each step")]


@dataclass(frozen=True)
class Stepping:
    """The options both sweeps take besides their steps (`options.with_options` makes each field an option)."""

    timeout_us: TimeoutOption = None
    http2: Http2Option = False
    streams: StreamsOption = None
    threads: ThreadsOption = DEFAULT_THREADS
    server: ServerOption = None
    workers: WorkersOption = None
    json_path: JsonPath = None
    fail_on: measuring.FailOnGiven = None
    out: watching.Out = None
    live: watching.Live = None


def run_steps(kind: str, url: str | None, steps: Sequence[tuple[float, LoadOptions]], keepalive: bool, stepping: Stepping, how: Measuring) -> int:
    """Each step's load on `url`, or on the server --server names; exit 1 when a step's repeat
    crosses one of the --fail-on thresholds."""
    thresholds = parse_thresholds(stepping.fail_on, default=())
    plans = [(value, load.plan("")) for value, load in steps]
    spec = server_spec(url, stepping.server, {"workers": stepping.workers}, False, DEFAULT_PATH, keepalive, stepping.threads, http2=stepping.http2)
    settings, json_path, db = how.settings(), stepping.json_path, how.store()
    if spec is not None:
        spec = for_connections(spec, max(plan.all_connections() for _, plan in plans))
    out, err = console(), console(stderr=True)
    printed = stored_steps = 0
    environment = host.snapshot_after_load()

    def step_params(plan: Plan) -> dict[str, Any]:
        return command_params("sweep", url, spec, DEFAULT_PATH, plan)

    params = {value: step_params(plan) for value, plan in plans}
    options = {"kind": kind, "plans": [plan.engine_json() for _, plan in plans], "settings": asdict(settings)}
    observers = watching.observers(stepping.out, stepping.live, "sweep")

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

        with load_runner(how.agents, how.scheduler) as runner, target_url(url, stepping.threads, err, spec, http2=plans[0][1].http_version == "2") as target:
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
@with_options(Measuring, "how")
@with_options(Stepping, "stepping")
def concurrency_command(
    stepping: Stepping,
    how: Measuring,
    url: Url = None,
    levels: Annotated[str, typer.Option("--levels", help="1,10,100,... or 200..4000:200")] = "1,10,100,250,500,1000",
    requests: Annotated[int | None, bounded(REQUESTS, "-n", "--requests", help="Requests per level")] = None,
    duration_us: Annotated[
        int | None, bounded(DURATION, "-d", "--duration", help=f"Time per level (default {DURATION.show(DEFAULT_DURATION_US)})")
    ] = None,
    no_keepalive: Annotated[bool, typer.Option("--no-keepalive", help="A new connection per request")] = False,
) -> int:
    """Throughput, latency and failed/timed-out shares at each concurrency level (ab-style)."""
    steps = [
        (level, LoadOptions(level, stepping.threads, requests, duration_us, timeout_us=stepping.timeout_us, no_keepalive=no_keepalive,
                            http2=stepping.http2, streams=stepping.streams))
        for level in concurrency_levels(levels)
    ]
    return run_steps("concurrency", url, steps, not no_keepalive, stepping, how)


@app.command("rate")
@with_options(Measuring, "how")
@with_options(Stepping, "stepping")
def rate_command(
    stepping: Stepping,
    how: Measuring,
    url: Url = None,
    low: Annotated[float, bounded(RATE, "--from", help="First offered rate, requests/s")] = 1000,
    high: Annotated[float, bounded(RATE, "--to", help="Last offered rate, requests/s")] = 5000,
    step: Annotated[float, bounded(RATE, "--step", help="Rate increment, requests/s")] = 1000,
    calls_per_connection: CallsOption = None,
    duration_us: Annotated[
        int, bounded(DURATION, "-d", "--duration", help="Time per rate", show_default=DURATION.show(DEFAULT_DURATION_US))
    ] = DEFAULT_DURATION_US,
    connections: Annotated[int, bounded(CONNECTIONS, "-c", "--connections", help="Connections available")] = 100,
) -> int:
    """Replies/s, latency and errors at each offered rate (httperf/autobench-style)."""
    steps = [
        (rate, LoadOptions(connections, stepping.threads, duration_us=duration_us, rate_per_s=rate, calls_per_connection=calls_per_connection,
                           timeout_us=stepping.timeout_us, http2=stepping.http2, streams=stepping.streams))
        for rate in offered_rates(low, high, step)
    ]
    return run_steps("rate", url, steps, True, stepping, how)

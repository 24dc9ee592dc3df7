"""`gauntlet run`: one closed-loop measurement, against a URL or the built-in server."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.text import Text

from gauntlet import engine, host
from gauntlet.analysis.thresholds import parse_thresholds
from gauntlet.cli import measuring, watching
from gauntlet.cli.agent_options import load_runner
from gauntlet.cli.load_options import LoadOptions, sessions_http2_fields
from gauntlet.bounds import (
    CALLS_PER_CONNECTION, CONNECTIONS, DURATION, IDLE, IDLE_SEND_INTERVAL, IO_BATCH, RATE, REQUESTS, THREADS, TIMEOUT, WARMUP,
    WORKERS,
)
from gauntlet.cli.measuring import Measuring
from gauntlet.cli.options import Http2Option, StreamsOption, bounded, with_options
from gauntlet.cli.progress import ProgressLine
from gauntlet.errors import GauntletError
from gauntlet.lab import local_split
from gauntlet.lab.measure import DEFAULT_SETTINGS, Repeats, Target, measure_repeats, measure_run
from gauntlet.lab.observers import Observer
from gauntlet.lab.stored import StoredRun, command_params
from gauntlet.report.agents import print_agents
from gauntlet.report.output import console
from gauntlet.report.tables import estimates_table, print_run, repeat_line
from gauntlet.servers.sizing import for_connections
from gauntlet.servers.spec import ServerSpec
from gauntlet.plan import DEFAULT_CONNECTIONS, DEFAULT_DURATION_US, DEFAULT_THREADS, DEFAULT_TIMEOUT_US, Plan

if TYPE_CHECKING:
    from gauntlet.model.loadfile import LoadFile
    from gauntlet.servers.base import ServerInstance

DEFAULT_PATH = "/webtest.html"
EXIT_NO_SUCCESS = 1
#: A server process exited, or no request ended (the case is stored as an error), even with --fail-on none.
EXIT_CASE_ERROR = 1
EXIT_INTERRUPTED = 130
REPEAT_SCHEMA = "gauntlet.repeat-result/2"

ServerOption = Annotated[
    str | None, typer.Option("--server", help="Without a URL: start this server kind (`gauntlet servers`)")
]
WorkersOption = Annotated[
    int | None, bounded(WORKERS, "--workers", help="--server: its workers (processes, threads or schedulers)")
]
ThreadsOption = Annotated[int, bounded(THREADS, "-t", "--threads", help="Load threads (at most -c)")]
TimeoutOption = Annotated[int | None, bounded(TIMEOUT, "--timeout", help=f"Per-request timeout (default {TIMEOUT.show(DEFAULT_TIMEOUT_US)})")]
CallsOption = Annotated[
    int | None, bounded(CALLS_PER_CONNECTION, "--calls-per-connection", help="K requests per connection, then reconnect")
]


@contextlib.contextmanager
def target_url(
    url: str | None, threads: int, console: Console, server: ServerSpec | None = None, path: str = DEFAULT_PATH,
    http2: bool = False,
) -> Iterator[Target]:
    """The URL to load: the one given (with `http2`, refused unless it speaks HTTP/2), or `path` on
    the server Gauntlet starts for this run (`server`, by default the built-in one with `threads` threads)."""
    if url is not None:
        if http2:
            from gauntlet.lab.http2_probe import require_http2

            require_http2(url)
        with Target(url) as target:
            yield target
        return
    from gauntlet.servers.registry import start_server

    spec = server or ServerSpec("builtin", workers=threads)

    def announce(instance: ServerInstance) -> None:
        backends = "".join(f", {b.name} pid {b.proc.pid}" for b in instance.backends)
        console.print(f"[dim]{spec.kind} server on {instance.url} (pid {instance.main_pid}){backends}[/dim]", soft_wrap=True)

    with Target(start=lambda: start_server(spec), path=path, announce=announce) as target:
        yield target


def check_json_destination(path: Path) -> None:
    """Refuse an unwritable --json path before the load, not after it."""
    directory = path.parent
    if path.is_dir() or not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise GauntletError(
            f"cannot write the result to {str(path)!r} (not a file in a writable directory)",
            "Create the directory or give another --json path",
        )


def write_json(path: Path, result: dict[str, Any]) -> None:
    """Written whole each time, so a reader never sees half a file's worth of steps."""
    try:
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(result, indent=2) + "\n")
        partial.replace(path)
    except OSError as err:
        raise GauntletError(f"cannot write {str(path)!r} ({err.strerror})", "Check the directory and its permissions") from None


def announce_stored(console: Console, stored: StoredRun, db: Path | None) -> None:
    if stored.run_id is not None and db is not None:
        console.print(
            Text(f"stored as run {stored.run_id} in {db} (gauntlet report --db {db} {stored.run_id})", style="dim"),
            soft_wrap=True,
        )


def sized_for(spec: ServerSpec | None, load: LoadFile, connections: int) -> ServerSpec | None:
    """The server a load file's sessions need: room for `connections`, and a second, HTTPS port
    when some pages are `scheme: https` and the server is not over TLS."""
    if spec is None:
        return None
    if load.uses_https and not spec.tls:
        spec = spec.with_(also_https=True)
    return for_connections(spec, connections)


def https_url_of(server: ServerInstance | None) -> str | None:
    return None if server is None else server.https_url


def run_sessions(
    load_path: Path, url: str | None, spec: ServerSpec | None, json_path: Path | None, db: Path | None,
    run_plan: engine.Runner, protocol: dict[str, Any], observers: list[Observer],
) -> int:
    """Each iteration of the load file's sessions on `url` or the server `spec` names, with its pages
    and QoS verdict, over the protocol's HTTP version; each stored as a repeat."""
    from gauntlet.analysis import qos
    from gauntlet.model import loadfile
    from gauntlet.report.sessions import print_sessions

    load = loadfile.load(load_path)
    spec = sized_for(spec, load, load.to_plan("").all_connections())
    out, err = console(), console(stderr=True)
    results: list[dict[str, Any]] = []
    valid, errored = True, False
    environment = host.snapshot_after_load()
    options = {"load": str(load_path), "load_file": load.model_dump(mode="json")}

    def sessions_params(plan: Plan) -> dict[str, Any]:
        return command_params("run", url, spec, "/", plan) | {"load": load_path.name}

    with StoredRun(db, "run", options, environment, load.iterations, observers, sessions_params) as stored, target_url(url, DEFAULT_THREADS, err, spec, http2=bool(protocol)) as target:
        plan = load.to_plan(target.url, https_url_of(target.server)).model_copy(update=protocol)
        params = sessions_params(plan)
        for iteration in range(load.iterations):
            with ProgressLine(err, None, load.measure) as progress:
                outcome = measure_run(plan, target.server, DEFAULT_SETTINGS, progress.update, run_plan)
            stored.add_measurement(params, outcome, iteration, target.server)
            results.append(outcome.result)
            if json_path is not None:
                write_json(json_path, results[0] if load.iterations == 1 else {"iterations": results})
            verdict = qos.verdict(outcome.result["sessions"], load.qos.good_share, load.qos.good_or_tolerable_share)
            valid &= verdict.valid
            errored |= outcome.error is not None
            if load.iterations > 1:
                out.print(f"[bold]iteration {iteration + 1} of {load.iterations}[/bold]")
            print_run(out, outcome.result)
            print_agents(out, outcome.result)
            print_sessions(out, outcome.result, verdict)
            if outcome.error is not None:
                print(f"gauntlet: {outcome.error}; the iteration is stored as an error", file=sys.stderr)
            if outcome.interrupted:
                stored.status = "interrupted"
                break
        else:
            stored.status = "failed" if errored else "complete"
    announce_stored(err, stored, db)
    if stored.status == "interrupted":
        return EXIT_INTERRUPTED
    return 0 if valid and not errored else EXIT_NO_SUCCESS


def server_spec(
    url: str | None,
    kind: str | None,
    settings: dict[str, Any],
    https: bool,
    path: str,
    keepalive: bool,
    threads: int,
    opcache: bool = True,
    apcu: bool = False,
    http2: bool = False,
) -> ServerSpec | None:
    """The server `--server` (`kind`) and its `settings` name (with PHP's `opcache` and `apcu`, and
    HTTP/2 when the load speaks it); None when a URL is given (settings then refused)."""
    given = [f"--{name.replace('_', '-')}" for name, value in settings.items() if value is not None]
    given += [flag for flag, on in (("--no-opcache", not opcache), ("--apcu", apcu)) if on]
    if url is not None:
        if kind is not None or given or https or path != DEFAULT_PATH:
            raise GauntletError(
                "--server, --path, --https and the server's settings are for a server Gauntlet starts, not for a URL",
                "Give either a URL or --server KIND",
            )
        return None
    kind = kind or "builtin"
    defined = {name: value for name, value in settings.items() if value is not None}
    if "app" in defined and "backend" not in defined and kind != "tomcat":
        defined["backend"] = "php-fpm"
    if kind == "builtin" and "workers" not in defined:
        defined["workers"] = threads
    from gauntlet.servers.registry import server_keepalive

    return ServerSpec(
        kind, keepalive=server_keepalive(kind, keepalive), tls=https, http2=http2, opcache=opcache, apcu=apcu, **defined
    )


def succeeded(result: dict[str, Any]) -> bool:
    return any(200 <= int(code) < 400 and n > 0 for code, n in result["status_codes"].items())


@with_options(Measuring, "how")
def run_command(
    how: Measuring,
    url: Annotated[str | None, typer.Argument(help="http://HOST[:PORT]/PATH; without it, the built-in server")] = None,
    connections: Annotated[int, bounded(CONNECTIONS, "-c", "--connections", help="Connections kept open")] = DEFAULT_CONNECTIONS,
    threads: ThreadsOption = DEFAULT_THREADS,
    requests: Annotated[int | None, bounded(REQUESTS, "-n", "--requests", help="Measure exactly N requests (10k, 1m)")] = None,
    duration_us: Annotated[int | None, bounded(DURATION, "-d", "--duration", help=f"Measure for D (10s, 2m); default {DURATION.show(DEFAULT_DURATION_US)}")] = None,
    rate_per_s: Annotated[float | None, bounded(RATE, "-R", "--rate", help="Open loop: R requests/s on a fixed schedule")] = None,
    no_keepalive: Annotated[bool, typer.Option("--no-keepalive", help="A new connection per request")] = False,
    calls_per_connection: CallsOption = None,
    http10: Annotated[bool, typer.Option("--http1.0", help="Send HTTP/1.0 requests")] = False,
    http2: Http2Option = False,
    streams: StreamsOption = None,
    tls_version: Annotated[str | None, typer.Option("--tls-version", help="https: 1.2 or 1.3 only")] = None,
    cipher: Annotated[str | None, typer.Option("--cipher", help="https: a cipher suite, e.g. TLS13_AES_128_GCM_SHA256, or several joined by ':' in order of preference (default: AES-128-GCM, AES-256-GCM, ChaCha20, as browsers and h2load)")] = None,
    no_tls_resumption: Annotated[
        bool, typer.Option("--no-tls-resumption", help="https: a full handshake on every new connection")
    ] = False,
    timeout_us: TimeoutOption = None,
    warmup_us: Annotated[int | None, bounded(WARMUP, "--warmup", help="Run this long first, uncounted")] = None,
    method: Annotated[str, typer.Option("-m", "--method", help="HTTP method")] = "GET",
    header: Annotated[list[str] | None, typer.Option("-H", "--header", help="'Name: value', repeatable")] = None,
    body: Annotated[Path | None, typer.Option("--body", help="Send this file as the request body")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the full result here")] = None,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target off this machine")] = False,
    source_addresses: Annotated[
        str | None,
        typer.Option("--source-addresses", help="Bind connections to these local IPs, round robin (127.0.0.2,127.0.0.3)"),
    ] = None,
    idle: Annotated[
        int | None, bounded(IDLE, "--idle", help="Also hold N connections open and idle, counted apart (C10K)")
    ] = None,
    idle_send_interval_us: Annotated[
        int | None, bounded(IDLE_SEND_INTERVAL, "--idle-send-interval", help="--idle: send one header byte on each every D (slowloris)")
    ] = None,
    io: Annotated[
        Literal["epoll", "uring"] | None, typer.Option("--io", help="The engine's transport: epoll (default) or uring (io_uring; falls back to epoll where it cannot)")
    ] = None,
    io_batch_us: Annotated[
        int | None,
        bounded(IO_BATCH, "--io-batch", help="Let each wait gather responses for up to D (200us; 0: never): less client CPU. Default: a --warmup of 267ms or more tries 400us and keeps it where it pays"),
    ] = None,
    scheduling: Annotated[
        Literal["batch", "normal"] | None,
        typer.Option("--scheduling", help="The load threads' policy: batch (SCHED_BATCH: a woken thread does not preempt the server) or normal. Default: batch in a closed loop, normal under --rate or --load"),
    ] = None,
    load: Annotated[Path | None, typer.Option("--load", help="Run the sessions of this load file (YAML)")] = None,
    server: ServerOption = None,
    path: Annotated[str, typer.Option("--path", help="Without a URL: the path to load")] = DEFAULT_PATH,
    workers: WorkersOption = None,
    backend: Annotated[str | None, typer.Option("--backend", help="--server: php-fpm, mod_php, uwsgi, ...")] = None,
    backend_workers: Annotated[int | None, bounded(WORKERS, "--backend-workers", help="--server: the backend's pool size")] = None,
    https: Annotated[bool, typer.Option("--https", help="--server: serve HTTPS (self-signed certificate)")] = False,
    app: Annotated[
        str | None, typer.Option("--app", help="--server: serve this application (wordpress, specweb) through --backend (default php-fpm; JSP on tomcat)")
    ] = None,
    no_opcache: Annotated[bool, typer.Option("--no-opcache", help="--server: PHP without its opcode cache")] = False,
    access_log: Annotated[
        bool, typer.Option("--access-log", help="--server: log every request; its count is checked against the engine's")
    ] = False,
    apcu: Annotated[bool, typer.Option("--apcu", help="--server --app wordpress: WordPress's object cache in APCu")] = False,
    fail_on: measuring.FailOn = None,
    out_to: watching.Out = None,
    live: watching.Live = None,
) -> int:
    """Drive closed-loop load at one URL (or open-loop with --rate, or sessions with --load); the
    result is stored in the results database (--db) and written as JSON with --json."""
    thresholds = parse_thresholds(fail_on)
    observers = watching.observers(out_to, live, "run")
    if json_path is not None:
        check_json_destination(json_path)
    server_settings: dict[str, Any] = {
        "workers": workers, "backend": backend, "backend_workers": backend_workers, "app": app, "access_log": access_log or None,
    }
    spec = server_spec(url, server, server_settings, https, path, not no_keepalive, threads, not no_opcache, apcu, http2)
    if load is not None:
        protocol = sessions_http2_fields(http2, streams)
        with load_runner(how.agents, how.scheduler) as run_plan:
            return run_sessions(load, url, spec, json_path, how.store(), run_plan, protocol, observers)
    out = console()
    err = console(stderr=True)
    load_options = LoadOptions(
        connections=connections, threads=threads, requests=requests, duration_us=duration_us, rate_per_s=rate_per_s,
        no_keepalive=no_keepalive, calls_per_connection=calls_per_connection, http10=http10, http2=http2, streams=streams,
        tls_version=tls_version,
        cipher=cipher, no_tls_resumption=no_tls_resumption, timeout_us=timeout_us, warmup_us=warmup_us, method=method,
        headers=header or [], body=body, allow_remote=allow_remote, source_addresses=source_addresses, idle=idle,
        idle_send_interval_us=idle_send_interval_us, io=io, io_batch_us=io_batch_us, scheduling=scheduling,
    )
    plan = load_options.plan(url or "")
    settings, repeat = how.settings(), how.repeat
    environment = host.snapshot_after_load()
    local_split.engine_processes(plan.engine_json())  # past this machine's limits: one line, before any server starts
    if spec is not None:
        if spec.kind == "builtin":
            local_split.server_processes(plan.all_connections())  # past this machine's limits: one line
        spec = for_connections(spec, plan.all_connections())
    if spec is not None and spec.app is not None:
        from gauntlet.servers.apps import app_page
        from gauntlet.servers.registry import check_spec

        check_spec(spec)  # before the application's seed is built
        path, expect = app_page(spec.app, None if path == DEFAULT_PATH else path)
        plan = plan.model_copy(update={"expect": expect})
    params = command_params("run", url, spec, path, plan)
    options = {"plan": plan.engine_json(), "settings": asdict(settings)}

    with StoredRun(how.store(), "run", options, environment, repeat, observers, lambda _plan: params) as stored:

        def measured(repeats: Repeats) -> None:
            if json_path is not None:
                write_json(json_path, run_json(repeats, environment()))
            stored.add_measurement(params, repeats.measurements[-1], len(repeats.measurements) - 1, target.server)
            if repeat > 1:
                out.print(repeat_line(len(repeats.measurements) - 1, repeat, repeats.results[-1]), highlight=False)

        with load_runner(how.agents, how.scheduler) as run_plan, target_url(url, threads, err, spec, path, plan.http_version == "2") as target, ProgressLine(
            err, plan.requests, plan.duration_us
        ) as progress:
            repeats = measure_repeats(plan, target, settings, progress.update, measured, run_plan)
        errors = [m.error for m in repeats.measurements if m.error is not None]
        stored.status = "interrupted" if repeats.interrupted else "failed" if errors else "complete"
    announce_stored(err, stored, how.store())
    if repeats.measurements:
        print_run(out, repeats.median().result)
        print_agents(out, repeats.median().result)
    if len(repeats.measurements) > 1:
        out.print("[dim]the repeat shown is the median by requests/s[/dim]")
        from gauntlet.report.verdicts import repeat_verdict  # the store and the report's views, only here

        estimates = repeats.to_json()["estimates"]
        out.print(estimates_table(estimates, len(repeats.measurements)))
        out.print(Text(repeat_verdict(estimates, repeats.results)))
    if repeats.interrupted:
        err.print("[yellow]interrupted: the figures cover what was measured until it was stopped[/yellow]")
        return EXIT_INTERRUPTED
    for error in errors:
        print(f"gauntlet: {error}; the case is stored as an error", file=sys.stderr)
    if not any(succeeded(result) for result in repeats.results):
        print("gauntlet: no request succeeded (no 2xx or 3xx response); see the outcomes above", file=sys.stderr)
        return EXIT_NO_SUCCESS
    return measuring.fail_on(thresholds, repeats.results) or (EXIT_CASE_ERROR if errors else 0)


def run_json(repeats: Repeats, environment: dict[str, Any]) -> dict[str, Any]:
    """One repeat: its result as is; several: every repeat and their estimates (gauntlet.repeat-result/2)."""
    if len(repeats.measurements) == 1:
        return {**repeats.results[0], "environment": environment}
    return {"schema": REPEAT_SCHEMA, "environment": environment, **repeats.to_json()}

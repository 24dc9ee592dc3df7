"""`gauntlet run`: one closed-loop measurement, against a URL or the built-in server."""

from __future__ import annotations

import base64
import contextlib
import inspect
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gauntlet import engine, host
from gauntlet.cli import measuring
from gauntlet.cli.agent_options import Agents, Scheduler, load_runner
from gauntlet.cli.progress import ProgressLine
from gauntlet.errors import GauntletError
from gauntlet.lab.bottleneck import DEFAULT_ERROR_SHARE
from gauntlet.lab.measure import DEFAULT_SETTINGS, Repeats, Target, measure_case, measure_run
from gauntlet.report.agents import print_agents
from gauntlet.report.tables import print_run, repeat_line, spread_table
from gauntlet.servers.spec import ServerSpec
from gauntlet.units import parse_count, parse_duration_us

if TYPE_CHECKING:
    from gauntlet.servers.base import ServerInstance

DEFAULT_DURATION = "10s"
DEFAULT_PATH = "/webtest.html"
EXIT_NO_SUCCESS = 1
EXIT_INTERRUPTED = 130
REPEAT_SCHEMA = "gauntlet.repeat-result/1"


def parse_header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise GauntletError(f"the header {text!r} has no 'Name: value' form", "Write it as -H 'Name: value'")
    return name.strip(), value.strip()


def read_body(path: Path) -> str:
    try:
        return base64.b64encode(path.read_bytes()).decode()
    except OSError as err:
        raise GauntletError(f"cannot read the body file {str(path)!r} ({err.strerror})", "Check the path") from None


def tls_settings(options: dict[str, Any]) -> dict[str, Any] | None:
    """TLS options for an https URL; None leaves the engine's defaults (resumption on)."""
    if options["tls_version"] is None and options["cipher"] is None and not options["no_tls_resumption"]:
        return None
    return {"version": options["tls_version"], "cipher": options["cipher"], "resumption": not options["no_tls_resumption"]}


def build_plan(url: str, options: dict[str, Any]) -> engine.Plan:
    connections = options["connections"]
    threads = options["threads"]
    if connections < 1 or threads < 1:
        raise GauntletError("connections and threads must be at least 1", "Give -c 1 or more and -t 1 or more")
    requests = parse_count(options["requests"], "-n") if options["requests"] else None
    duration = options["duration"] or (None if requests else DEFAULT_DURATION)
    return {
        "url": url,
        "allow_remote": options["allow_remote"],
        "method": options["method"].upper(),
        "headers": [list(parse_header(h)) for h in options["header"]],
        "body_base64": read_body(options["body"]) if options["body"] else None,
        "http_version": "1.0" if options["http10"] else "1.1",
        "keepalive": not options["no_keepalive"],
        "tls": tls_settings(options),
        "calls_per_connection": options["calls_per_connection"],
        "connections": connections,
        "rate_per_s": options["rate"],
        "threads": min(threads, connections),
        "requests": requests,
        "duration_us": parse_duration_us(duration, "-d") if duration else None,
        "warmup_us": parse_duration_us(options["warmup"], "--warmup") if options["warmup"] else 0,
        "timeout_us": parse_duration_us(options["timeout"], "--timeout"),
    }


def plan_options(**given: Any) -> dict[str, Any]:
    """The options of `gauntlet run` with its defaults, overridden by `given` (for sweeps and sessions)."""
    defaults = {name: p.default for name, p in inspect.signature(run_command).parameters.items()}
    return {**defaults, "header": [], **given}


@contextlib.contextmanager
def target_url(
    url: str | None, threads: int, console: Console, server: ServerSpec | None = None, path: str = DEFAULT_PATH
) -> Iterator[Target]:
    """The URL to load: the one given, or `path` on the server Gauntlet starts for this run (`server`,
    by default the built-in one with `threads` threads)."""
    if url is not None:
        with Target(url) as target:
            yield target
        return
    from gauntlet.servers.registry import start_server

    spec = server or ServerSpec("builtin", workers=threads)

    def announce(instance: ServerInstance) -> None:
        console.print(f"[dim]{spec.kind} server on {instance.url} (pid {instance.pids()[0]})[/dim]")

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


def run_sessions(load_path: Path, url: str | None, json_path: Path | None, run_plan: engine.Runner) -> int:
    """Each iteration of the load file's sessions, with its pages and QoS verdict."""
    from gauntlet.lab import loadfile, qos
    from gauntlet.report.sessions import print_sessions

    load = loadfile.load(load_path)
    out, err = Console(), Console(stderr=True)
    results: list[dict[str, Any]] = []
    valid = True
    with target_url(url, 2, err) as target:
        for iteration in range(load.iterations):
            with ProgressLine(err, None, load.measure) as progress:
                outcome = measure_run(load.plan(target.url), target.server, DEFAULT_SETTINGS, progress.update, run_plan)
            results.append(outcome.result)
            if json_path is not None:
                write_json(json_path, results[0] if load.iterations == 1 else {"iterations": results})
            verdict = qos.verdict(outcome.result["sessions"], load.qos.good_share, load.qos.good_or_tolerable_share)
            valid &= verdict.valid
            if load.iterations > 1:
                out.print(f"[bold]iteration {iteration + 1} of {load.iterations}[/bold]")
            print_run(out, outcome.result)
            print_agents(out, outcome.result)
            print_sessions(out, outcome.result, verdict)
            if outcome.interrupted:
                return EXIT_INTERRUPTED
    return 0 if valid else EXIT_NO_SUCCESS


def server_spec(url: str | None, options: dict[str, Any]) -> ServerSpec | None:
    """The server `--server` and its settings name; None when a URL is given (settings then refused)."""
    settings = {
        "workers": options["workers"], "backend": options["backend"], "backend_workers": options["backend_workers"],
    }
    given = [f"--{name.replace('_', '-')}" for name, value in settings.items() if value is not None]
    if url is not None:
        if options["server"] is not None or given or options["https"] or options["path"] != DEFAULT_PATH:
            raise GauntletError(
                "--server, --path, --https and the server's settings are for a server Gauntlet starts, not for a URL",
                "Give either a URL or --server KIND",
            )
        return None
    kind = options["server"] or "builtin"
    defined = {name: value for name, value in settings.items() if value is not None}
    if kind == "builtin" and "workers" not in defined:
        defined["workers"] = min(options["threads"], options["connections"])
    from gauntlet.servers.registry import server_keepalive

    keepalive = server_keepalive(kind, not options["no_keepalive"])
    return ServerSpec(kind, keepalive=keepalive, tls=options["https"], **defined)


def succeeded(result: dict[str, Any]) -> bool:
    return any(200 <= int(code) < 400 and n > 0 for code, n in result["status_codes"].items())


def run_command(
    url: Annotated[str | None, typer.Argument(help="http://HOST[:PORT]/PATH; without it, the built-in server")] = None,
    connections: Annotated[int, typer.Option("-c", "--connections", help="Connections kept open")] = 50,
    threads: Annotated[int, typer.Option("-t", "--threads", help="Load threads (at most -c)")] = 2,
    requests: Annotated[str | None, typer.Option("-n", "--requests", help="Measure exactly N requests (10k, 1m)")] = None,
    duration: Annotated[str | None, typer.Option("-d", "--duration", help="Measure for D (10s, 2m); default 10s")] = None,
    rate: Annotated[
        float | None, typer.Option("-R", "--rate", min=0.001, help="Open loop: R requests/s on a fixed schedule")
    ] = None,
    no_keepalive: Annotated[bool, typer.Option("--no-keepalive", help="A new connection per request")] = False,
    calls_per_connection: Annotated[
        int | None, typer.Option("--calls-per-connection", min=1, help="K requests per connection, then reconnect")
    ] = None,
    http10: Annotated[bool, typer.Option("--http1.0", help="Send HTTP/1.0 requests")] = False,
    tls_version: Annotated[str | None, typer.Option("--tls-version", help="https: 1.2 or 1.3 only")] = None,
    cipher: Annotated[str | None, typer.Option("--cipher", help="https: one cipher suite, e.g. TLS13_AES_128_GCM_SHA256")] = None,
    no_tls_resumption: Annotated[
        bool, typer.Option("--no-tls-resumption", help="https: a full handshake on every new connection")
    ] = False,
    timeout: Annotated[str, typer.Option("--timeout", help="Per-request timeout")] = "15s",
    warmup: Annotated[str | None, typer.Option("--warmup", help="Run this long first, uncounted")] = None,
    method: Annotated[str, typer.Option("-m", "--method", help="HTTP method")] = "GET",
    header: Annotated[list[str] | None, typer.Option("-H", "--header", help="'Name: value', repeatable")] = None,
    body: Annotated[Path | None, typer.Option("--body", help="Send this file as the request body")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the full result here")] = None,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target off this machine")] = False,
    load: Annotated[Path | None, typer.Option("--load", help="Run the sessions of this load file (YAML)")] = None,
    server: Annotated[
        str | None, typer.Option("--server", help="Without a URL: start this server kind (`gauntlet servers`)")
    ] = None,
    path: Annotated[str, typer.Option("--path", help="Without a URL: the path to load")] = DEFAULT_PATH,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="--server: its worker processes")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="--server: php-fpm, mod_php, uwsgi, ...")] = None,
    backend_workers: Annotated[
        int | None, typer.Option("--backend-workers", min=1, help="--server: the backend's pool size")
    ] = None,
    https: Annotated[bool, typer.Option("--https", help="--server: serve HTTPS (self-signed certificate)")] = False,
    repeat: measuring.Repeat = 1,
    restart_between: measuring.RestartBetween = False,
    warmup_requests: measuring.WarmupRequests = None,
    link: measuring.Link = None,
    error_share: measuring.ErrorShare = DEFAULT_ERROR_SHARE,
    agents: Agents = None,
    scheduler: Scheduler = None,
) -> int:
    """Drive closed-loop load at one URL (or open-loop with --rate, or sessions with --load)."""
    if json_path is not None:
        check_json_destination(json_path)
    if load is not None:
        with load_runner(agents, scheduler) as run_plan:
            return run_sessions(load, url, json_path, run_plan)
    options = dict(locals())
    options["header"] = header or []
    out = Console()
    err = Console(stderr=True)
    plan = build_plan(url or "", options)
    settings = measuring.settings(repeat, restart_between, warmup_requests, link, error_share)
    environment = host.snapshot_after_load()

    def measured(case: Repeats) -> None:
        if json_path is not None:
            write_json(json_path, run_json(case, environment()))
        if repeat > 1:
            out.print(repeat_line(len(case.measurements) - 1, repeat, case.results[-1]), highlight=False)

    spec = server_spec(url, options)
    with load_runner(agents, scheduler) as run_plan, target_url(url, plan["threads"], err, spec, path) as target, ProgressLine(
        err, plan["requests"], plan["duration_us"]
    ) as progress:
        case = measure_case(plan, target, settings, progress.update, measured, run_plan)
    if case.measurements:
        print_run(out, case.median().result)
        print_agents(out, case.median().result)
    if len(case.measurements) > 1:
        out.print("[dim]the repeat shown is the median by requests/s[/dim]")
        out.print(spread_table(case.to_json()["spread"]))
    if case.interrupted:
        err.print("[yellow]interrupted: the figures cover what was measured until Ctrl-C[/yellow]")
        return EXIT_INTERRUPTED
    if not any(succeeded(result) for result in case.results):
        print("gauntlet: no request succeeded (no 2xx or 3xx response); see the outcomes above", file=sys.stderr)
        return EXIT_NO_SUCCESS
    return 0


def run_json(case: Repeats, environment: dict[str, Any]) -> dict[str, Any]:
    """One repeat: its result as is; several: every repeat and their spread (gauntlet.repeat-result/1)."""
    if len(case.measurements) == 1:
        return {**case.results[0], "environment": environment}
    return {"schema": REPEAT_SCHEMA, "environment": environment, **case.to_json()}

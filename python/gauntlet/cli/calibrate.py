"""`gauntlet calibrate [URL]`: the engine against wrk and h2load on the same target, so users can
check that Gauntlet is not the bottleneck."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from gauntlet import host
from gauntlet.bounds import CONNECTIONS, DURATION, REPEATS, THREADS
from gauntlet.cli.load_options import http2_fields
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, Http2Option, NoStoreOption, StreamsOption, bounded
from gauntlet.cli.run import DEFAULT_PATH, ServerOption, WorkersOption, check_json_destination, server_spec, write_json
from gauntlet.errors import GauntletError
from gauntlet.lab import calibrate
from gauntlet.lab.peer_cipher import wrk_cipher
from gauntlet.lab.stored import StoredRun
from gauntlet.plan import DEFAULT_THREADS
from gauntlet.report.output import console
from gauntlet.servers.spec import ServerSpec

CALIBRATION_SCHEMA = "gauntlet.calibration/1"


def calibrate_command(
    url: Annotated[str | None, typer.Argument(help="http[s]://HOST[:PORT]/PATH; without it, the built-in server")] = None,
    rounds: Annotated[int, bounded(REPEATS, "--rounds", help="Rounds; each runs every tool once")] = 3,
    duration_us: Annotated[
        int, bounded(DURATION, "-d", "--duration", help="Length of each run (whole seconds)", show_default="5s")
    ] = 5_000_000,
    connections: Annotated[int, bounded(CONNECTIONS, "-c", "--connections", help="Connections of every tool")] = 100,
    threads: Annotated[int, bounded(THREADS, "-t", "--threads", help="Threads of every tool")] = DEFAULT_THREADS,
    server: ServerOption = None,
    workers: WorkersOption = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write every run and the ratios here")] = None,
    http2: Http2Option = False,
    streams: StreamsOption = None,
    db: DbOption = DEFAULT_DB_PATH,
    no_store: NoStoreOption = False,
) -> int:
    """Run the engine and each installed peer (wrk, h2load) alternately; print the engine's ratios.
    With --http2, against h2load, on HTTPS; without a URL or --server, on nginx."""
    if json_path is not None:
        check_json_destination(json_path)
    http2_fields(http2, streams)  # --streams without --http2 is refused here
    http2_streams = (streams or 1) if http2 else None
    wanted = calibrate.HTTP2_PEERS if http2 else calibrate.PEERS
    peers = calibrate.installed_peers(http2)
    if not peers:
        raise GauntletError(
            f"no peer load generator{' that speaks HTTP/2' if http2 else ''} is installed ({', '.join(wanted)})",
            f"Install one: apt-get install {' '.join(calibrate.PEER_PACKAGES[peer] for peer in wanted)}",
        )
    duration_s = max(1, round(duration_us / 1_000_000))
    out, err = console(), console(stderr=True)
    environment = host.snapshot_after_load()
    settings: dict[str, Any] = {"workers": workers}
    if http2 and url is None and server is None:
        # The built-in server speaks HTTP/1.x only. No limit on a connection's streams: at nginx's
        # 1000 it sends GOAWAY, and h2load does not reconnect.
        server, settings["keepalive_requests"] = "nginx", 0
    spec = server_spec(url, server, settings, http2 and url is None, DEFAULT_PATH, True, threads, http2=http2)
    with _target(url, spec, err) as (target_url, server_pids):
        # Every tool gets the same threads, and wrk refuses more threads than connections.
        cipher = wrk_cipher(target_url) if "wrk" in peers and target_url.startswith("https://") else None
        load = calibrate.Load(
            target_url, connections, min(threads, connections), duration_s, http2_streams=http2_streams, cipher=cipher
        )

        def show(sample: calibrate.Sample) -> None:
            server = sample.server_us_per_request
            err.print(
                f"round {sample.round + 1} {sample.tool:9} {sample.requests_per_s:10,.0f} requests/s  "
                f"client {sample.client_us_per_request:5.1f} µs/request"
                + ("" if server is None else f"  server {server:5.1f} µs/request"),
                highlight=False,
                soft_wrap=True,
            )

        samples = calibrate.run_rounds(load, (calibrate.ENGINE, *peers), rounds, server_pids, show)
    found = calibrate.summary(samples, peers)
    out.print(_table(found, peers, load, rounds))
    figures = {"schema": CALIBRATION_SCHEMA, "load": load.__dict__, "rounds": rounds, **found}
    if json_path is not None:
        write_json(json_path, {**figures, "environment": environment()})
    with StoredRun(None if no_store else db, "calibrate", figures, environment, planned_cases=0) as stored:
        stored.begin()
        stored.status = "complete"
    if stored.run_id is not None:
        err.print(f"stored as run {stored.run_id} in {db}")
    return 0


@contextlib.contextmanager
def _target(url: str | None, spec: ServerSpec | None, console: Console) -> Iterator[tuple[str, Sequence[int] | None]]:
    """The URL given, or the server `spec` names in its own process (its pids, to count its CPU)."""
    if url is not None:
        yield url, None
        return
    assert spec is not None, "server_spec names a server whenever no URL is given"
    from gauntlet.servers.registry import start_server

    with start_server(spec) as server:
        pids = server.pids()
        console.print(f"[dim]{spec.kind} server on {server.url} (pid {pids[0]})[/dim]")
        yield f"{server.url.rstrip('/')}{DEFAULT_PATH}", pids


def _table(found: dict, peers: Sequence[str], load: calibrate.Load, rounds: int) -> Table:
    table = Table(
        title=f"{load.url}, -c {load.connections} -t {load.threads}, {rounds} rounds of {load.duration_s} s (medians)"
        + ("" if load.cipher is None else f", every tool on {load.cipher}"),
        caption="ratios: gauntlet / tool within each round, median over rounds; client CPU below 1: gauntlet is cheaper",
        title_justify="left", caption_justify="left", box=box.SIMPLE_HEAD, header_style="bold",
    )
    for column in ("tool", "req/s", "client µs/req", "server µs/req", "errors", "req/s ratio", "CPU ratio"):
        table.add_column(column, justify="left" if column == "tool" else "right")
    for tool in (calibrate.ENGINE, *peers):
        figures = found["tools"][tool]
        ratio = found["ratios"].get(tool)
        server = figures["server_cpu_us_per_request"]
        table.add_row(
            tool,
            f"{figures['requests_per_s']:,.0f}",
            f"{figures['client_cpu_us_per_request']:.1f}",
            "-" if server is None else f"{server:.1f}",
            f"{figures['errors']:,}",
            "1.00" if ratio is None else f"{ratio['requests_per_s']:.2f}",
            "1.00" if ratio is None else f"{ratio['client_cpu_us_per_request']:.2f}",
        )
    return table

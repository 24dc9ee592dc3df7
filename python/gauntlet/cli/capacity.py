"""`gauntlet capacity LOADFILE [URL]`: the most simultaneous sessions that stay QoS-valid, or with
arrival phases the highest peak arrival rate that every phase survives."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gauntlet.analysis.thresholds import parse_thresholds
from gauntlet.cli.agent_options import Agents, Scheduler, load_runner
from gauntlet.cli import measuring, watching
from gauntlet.cli.progress import ProgressLine
from gauntlet import host
from gauntlet.cli.load_options import sessions_http2_fields
from gauntlet.bounds import PROBES, USERS, WARMUP
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, Http2Option, NoStoreOption, StreamsOption, bounded, store_path
from gauntlet.cli.run import (
    DEFAULT_PATH, EXIT_INTERRUPTED, ServerOption, WorkersOption, announce_stored, server_spec, https_url_of, sized_for, target_url, write_json,
)
from gauntlet.plan import DEFAULT_THREADS
from gauntlet.report.output import console

if TYPE_CHECKING:
    from gauntlet.analysis.capacity import Capacity


class Interrupted(Exception):
    """Ctrl-C during a probe: the search ends with what it has."""


def capacity_command(
    load_path: Annotated[Path, typer.Argument(help="The load file (sessions, windows, QoS)")],
    url: Annotated[str | None, typer.Argument(help="http[s]://HOST[:PORT]; without it, the built-in server")] = None,
    start: Annotated[
        int, bounded(USERS, "--start", help="The first number of sessions (with phases: peak users/s) tried")
    ] = 10,
    max_probes: Annotated[
        int, bounded(PROBES, "--max-probes", help="At most this many measurements once a level has failed (the growth to it is never cut short)")
    ] = 10,
    warm_up_us: Annotated[int, bounded(
        WARMUP, "--warm-up", help="Before the first probe, run the start level this long unmeasured (JIT, compiled pages, caches)",
    )] = 0,
    json_path: Annotated[Path | None, typer.Option("--json", help="Every probe's result and the answer")] = None,
    http2: Http2Option = False,
    streams: StreamsOption = None,
    server: ServerOption = None,
    workers: WorkersOption = None,
    fail_on: measuring.FailOnGiven = None,
    agents: Agents = None,
    scheduler: Scheduler = None,
    db: DbOption = DEFAULT_DB_PATH,
    no_store: NoStoreOption = False,
    out_to: watching.Out = None,
    live: watching.Live = None,
) -> int:
    """Grow the number of simultaneous sessions (or the arrival rates) until QoS fails, then bisect."""
    # Imported here: pydantic and PyYAML would slow every other command's start (and its CPU figure).
    from gauntlet.analysis import capacity, qos
    from gauntlet.lab.measure import DEFAULT_SETTINGS, measure_run
    from gauntlet.lab.stored import StoredRun, command_params
    from gauntlet.lab.suite import qos_summary
    from gauntlet.lab.warm_up import WarmUpInterrupted, run_warm_up, warm_up_load
    from gauntlet.model import loadfile
    from gauntlet.report.sessions import capacity_line, probe_line

    protocol = sessions_http2_fields(http2, streams)
    thresholds = parse_thresholds(fail_on, default=())
    load = loadfile.load(load_path)
    out, err = console(), console(stderr=True)
    probes: list[dict[str, Any]] = []

    def save(found: Capacity | None) -> None:
        if json_path is not None:
            answer = None if found is None else {
                load.level_name: found.users, "first_invalid": found.first_invalid,
            }
            write_json(json_path, {"schema": "gauntlet.capacity-result/1", "probes": probes, "capacity": answer})

    options = {"load": str(load_path), "load_file": load.model_dump(mode="json"), "start": start, "max_probes": max_probes,
               "warm_up_us": warm_up_us, **protocol}
    spec = server_spec(url, server, {"workers": workers}, False, DEFAULT_PATH, True, DEFAULT_THREADS, http2=http2)
    spec = sized_for(spec, load, capacity.most_connections(load))
    stored = StoredRun(
        store_path(db, no_store), "capacity", options, host.snapshot_after_load(), max_probes,
        watching.observers(out_to, live, "capacity"),
    )
    with stored, load_runner(agents, scheduler) as run_plan, target_url(url, DEFAULT_THREADS, err, spec, http2=http2) as target:
        #: The warm-up's summary, stored with the first probe (the report sets its CPU per page beside the probes').
        warmed: list[dict[str, Any]] = []

        def warm_up() -> None:
            plan = warm_up_load(load, warm_up_us).at_level(start).to_plan(target.url, https_url_of(target.server))
            err.print(f"warm-up: {start} {load.level_name} for {warm_up_us / 1e6:g} s, not measured")
            warmed.append(run_warm_up(plan.model_copy(update=protocol), target.server, start))

        def probe(level: int) -> bool:
            plan = load.at_level(level).to_plan(target.url, https_url_of(target.server)).model_copy(update=protocol)
            params = command_params("capacity", url, spec, "/", plan) | {"load": load_path.name, load.level_name: level}
            stored.feed.next_case(params, 0)
            with ProgressLine(err, None, load.measure) as progress:
                measured = measure_run(plan, target.server, DEFAULT_SETTINGS, progress.update, run_plan)
            measured.result["qos"] = qos_summary(load, measured.result)
            if warmed:
                measured.result["warm_up"] = warmed.pop()
            stored.add_measurement(params, measured, 0, target.server)
            verdict = qos.verdict(measured.result["sessions"], load.qos.good_share, load.qos.good_or_tolerable_share)
            probes.append({load.level_name: level, "valid": verdict.valid, "result": measured.result})
            save(None)
            out.print(probe_line(level, measured.result, verdict, load.level_name))
            if measured.interrupted:
                raise Interrupted
            return verdict.valid

        try:
            if warm_up_us:
                warm_up()
            found = capacity.search(probe, start, max_probes, capacity.ceiling(load))
        except (Interrupted, WarmUpInterrupted):
            stored.status = "interrupted"
        else:
            stored.status = "complete"
    announce_stored(err, stored, store_path(db, no_store))
    if stored.status == "interrupted":
        err.print("[yellow]interrupted: the probes above were measured; no capacity was settled[/yellow]")
        return EXIT_INTERRUPTED
    save(found)
    out.print(capacity_line(found, load.level_name))
    # The thresholds hold at the capacity found: the largest valid level's probes (none: nothing to judge).
    at_capacity = [p["result"] for p in probes if p["valid"] and p[load.level_name] == found.users]
    return measuring.fail_on(thresholds, at_capacity, [f"{load.level_name} {found.users}"] * len(at_capacity))

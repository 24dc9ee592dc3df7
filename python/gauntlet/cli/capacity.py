"""`gauntlet capacity LOADFILE [URL]`: the most simultaneous sessions that stay QoS-valid, or with
arrival phases the highest peak arrival rate that every phase survives."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gauntlet.cli.agent_options import Agents, Scheduler, load_runner
from gauntlet.cli.progress import ProgressLine
from gauntlet.cli.run import EXIT_INTERRUPTED, target_url, write_json

if TYPE_CHECKING:
    from gauntlet.lab.capacity import Capacity


class Interrupted(Exception):
    """Ctrl-C during a probe: the search ends with what it has."""


def capacity_command(
    load_path: Annotated[Path, typer.Argument(help="The load file (sessions, windows, QoS)")],
    url: Annotated[str | None, typer.Argument(help="http[s]://HOST[:PORT]; without it, the built-in server")] = None,
    start: Annotated[
        int, typer.Option("--start", min=1, help="The first number of sessions (with phases: peak users/s) tried")
    ] = 10,
    max_probes: Annotated[int, typer.Option("--max-probes", min=1, help="At most this many measurements")] = 10,
    json_path: Annotated[Path | None, typer.Option("--json", help="Every probe's result and the answer")] = None,
    agents: Agents = None,
    scheduler: Scheduler = None,
) -> int:
    """Grow the number of simultaneous sessions (or the arrival rates) until QoS fails, then bisect."""
    # Imported here: pydantic and PyYAML would slow every other command's start (and its CPU figure).
    from gauntlet.lab import capacity, loadfile, qos
    from gauntlet.lab.measure import DEFAULT_SETTINGS, measure_run
    from gauntlet.report.sessions import capacity_line, probe_line

    load = loadfile.load(load_path)
    out, err = Console(), Console(stderr=True)
    probes: list[dict[str, Any]] = []

    def save(found: Capacity | None) -> None:
        if json_path is not None:
            answer = None if found is None else {
                load.level_name: found.users, "first_invalid": found.first_invalid,
            }
            write_json(json_path, {"schema": "gauntlet.capacity-result/1", "probes": probes, "capacity": answer})

    with load_runner(agents, scheduler) as run_plan, target_url(url, 2, err) as target:

        def probe(level: int) -> bool:
            with ProgressLine(err, None, load.measure) as progress:
                measured = measure_run(
                    load.at_level(level).plan(target.url), target.server, DEFAULT_SETTINGS, progress.update, run_plan
                )
            verdict = qos.verdict(measured.result["sessions"], load.qos.good_share, load.qos.good_or_tolerable_share)
            probes.append({load.level_name: level, "valid": verdict.valid, "result": measured.result})
            save(None)
            out.print(probe_line(level, measured.result, verdict, load.level_name))
            if measured.interrupted:
                raise Interrupted
            return verdict.valid

        try:
            found = capacity.search(probe, start, max_probes)
        except Interrupted:
            err.print("[yellow]interrupted: the probes above were measured; no capacity was settled[/yellow]")
            return EXIT_INTERRUPTED
    save(found)
    out.print(capacity_line(found, load.level_name))
    return 0

"""`gauntlet calibrate noise`: the noise floor of this machine, measured from A/A pairs and stored
for `compare` (docs/metrics.md, "The noise floor").

It runs the same short measurement 2 x --pairs times, each on a freshly started server (as two
separate `gauntlet run` commands would), takes consecutive runs as pairs, and stores per figure the
change 99 % of identical pairs stay within (analysis.verdict.floor_from_pairs). The runs are kept
in the store too (command `calibrate`), so the floor can be traced to them.
"""

from __future__ import annotations

import socket
from typing import Annotated, Any

from rich import box
from rich.table import Table
from rich.text import Text

from gauntlet import host
from gauntlet.analysis.verdict import pair_floors
from gauntlet.cli.load_options import LoadOptions
from gauntlet.bounds import CONNECTIONS, DURATION, PAIRS, THREADS, WARMUP
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, bounded
from gauntlet.cli.progress import ProgressLine
from gauntlet.cli.run import DEFAULT_PATH, ServerOption, WorkersOption, announce_stored, server_spec, target_url
from gauntlet.errors import GauntletError
from gauntlet.lab.measure import Settings, measure_repeats
from gauntlet.lab.stored import StoredRun, command_params
from gauntlet.plan import DEFAULT_THREADS
from gauntlet.report.output import console
from gauntlet.servers.sizing import for_connections

EXIT_INTERRUPTED = 130


def noise_command(
    server: ServerOption = None,
    workers: WorkersOption = None,
    pairs: Annotated[int, bounded(PAIRS, "--pairs", help="A/A pairs: 2 x N runs, each on a fresh server")] = 5,
    connections: Annotated[int, bounded(CONNECTIONS, "-c", "--connections", help="Connections of each run")] = 10,
    duration_us: Annotated[int, bounded(DURATION, "-d", "--duration", help="Length of each run", show_default="2s")] = 2_000_000,
    threads: Annotated[int, bounded(THREADS, "-t", "--threads", help="Load threads")] = DEFAULT_THREADS,
    warmup_us: Annotated[
        int | None,
        bounded(WARMUP, "--warmup", help="Run this long first, uncounted, in each run: give your cases' warm-up (where the engine tries its batch window)"),
    ] = None,
    db: DbOption = DEFAULT_DB_PATH,
) -> int:
    """Measure how much identical runs differ on this machine (the built-in server by default, or
    --server KIND) and store it as the noise floor `compare` judges changes against."""
    spec = server_spec(None, server, {"workers": workers}, False, DEFAULT_PATH, True, threads)
    assert spec is not None  # no URL: always a server Gauntlet starts
    plan = LoadOptions(connections=connections, threads=min(threads, connections), duration_us=duration_us, warmup_us=warmup_us).plan("")
    spec = for_connections(spec, plan.all_connections())
    out, err = console(), console(stderr=True)
    runs = 2 * pairs
    options = {"plan": plan.engine_json(), "pairs": pairs}
    with StoredRun(db, "calibrate", options, host.snapshot_after_load(), runs) as stored, target_url(None, threads, err, spec) as target:
        params = command_params("calibrate", None, spec, DEFAULT_PATH, plan)

        def measured(repeats: Any) -> None:
            index = len(repeats.measurements) - 1
            stored.add_measurement(params, repeats.measurements[-1], index, target.server)
            rate = repeats.results[-1]["requests_per_s"]
            out.print(f"pair {index // 2 + 1} of {pairs}, run {index % 2 + 1}: {rate:,.0f} requests/s", highlight=False)

        with ProgressLine(err, None, plan.duration_us) as progress:
            repeats = measure_repeats(plan, target, Settings(repeats=runs, restart_between=True), progress.update, measured)
        stored.status = "interrupted" if repeats.interrupted else "complete"
    announce_stored(err, stored, db)
    if repeats.interrupted:
        err.print("[yellow]interrupted: no noise floor stored[/yellow]")
        return EXIT_INTERRUPTED
    floors = pair_floors(repeats.results)
    if not floors:
        raise GauntletError("no figure could be measured in every pair (no response?)", "Check the server with gauntlet run first")
    from gauntlet.store import Store
    from gauntlet.store.noise import Measured

    workers_text = f", {spec.workers} workers" if spec.workers else ""
    warmup_text = f" --warmup {WARMUP.show(warmup_us)}" if warmup_us else ""
    load = f"-c {connections} -d {DURATION.show(duration_us)}{warmup_text}"
    measured_floors = Measured(floors, pairs, f"{spec.kind}{workers_text}", load, socket.gethostname(), stored.run_id)
    with Store.open(db) as store:
        store.add_noise_floors(measured_floors)
    out.print(floor_table(floors, pairs))
    out.print(Text(f"stored in {db}: gauntlet compare judges changes of these figures against them", style="dim"), soft_wrap=True)
    return 0


def floor_table(floors: dict[str, float], pairs: int) -> Table:
    table = Table(title=f"Noise floor from {pairs} A/A pairs", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    table.add_column("figure")
    table.add_column("99 % of identical pairs within", justify="right")
    for name, relative in floors.items():
        table.add_row(name, f"±{relative:.1%}")
    return table

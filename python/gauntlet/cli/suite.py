"""`gauntlet suite run|list|show`: a study's grid of cases, each stored the moment it ends."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from gauntlet import engine
from gauntlet.cli.progress import SuiteProgress
from gauntlet.errors import GauntletError
from gauntlet.lab.record import CaseRecord

app = typer.Typer(help="Suites: a study's servers, workloads and grids, run, stored and reported.", no_args_is_help=True)

EXIT_INTERRUPTED = 130
DEFAULT_DB = Path("results.db")
DEFAULT_REPORT = Path("report.html")


class StoreSink:
    """Each record into the store as it ends, and onto the terminal."""

    def __init__(self, store: Any, run_id: int, display: SuiteProgress) -> None:
        self._store = store
        self._run_id = run_id
        self._display = display

    def case_started(self, params: dict[str, Any], repeat: int) -> None:
        from gauntlet.report.labels import case_label

        self._display.started(case_label(params) + (f"  #{repeat + 1}" if repeat else ""))

    def progress(self, progress: engine.Progress) -> None:
        self._display.update(progress)

    def case_done(self, record: CaseRecord) -> None:
        from gauntlet.report.tables import case_line

        self._store.add_case(self._run_id, record)
        self._display.finished(case_line(record))


def _servers_option(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


@app.command("run")
def run_command(
    suite: Annotated[str | None, typer.Argument(help="A shipped suite's name (quick, thesis, ...) or a suite file")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="The short variant (minutes on 2 cores)")] = False,
    servers: Annotated[str | None, typer.Option("--servers", help="Only these kinds: nginx,apache-event,...")] = None,
    db: Annotated[Path, typer.Option("--db", help="The results database (SQLite)")] = DEFAULT_DB,
    resume: Annotated[int | None, typer.Option("--resume", help="Run what this run is missing")] = None,
    repeat: Annotated[int | None, typer.Option("--repeat", min=1, help="Measurements per case (default: the suite's)")] = None,
    restart_between: Annotated[
        bool, typer.Option("--restart-between", help="Restart the server between repeats")
    ] = False,
    report: Annotated[Path, typer.Option("-o", "--report", help="Write the HTML report here")] = DEFAULT_REPORT,
) -> int:
    """Run a suite: every case on every installed server, stored as it ends, then the report."""
    from gauntlet.lab.suite import Interrupted, SuitePlan, SuiteRunner, select_servers
    from gauntlet.store import Store
    from gauntlet.suite.expand import expand
    from gauntlet.suite.load import parse_suite

    out, err = Console(), Console(stderr=True)
    with Store.open(db) as store:
        if resume is not None:
            if suite is not None:
                raise GauntletError("--resume takes the run's own suite", "Give --resume RUN without a suite name")
            row = store.resume_run(resume)
            options = row["options"]
            loaded = parse_suite(row["suite_text"], Path(options["suite_path"]), options["quick"])
            done = store.done(resume)
            run_id = resume
        else:
            if suite is None:
                raise GauntletError("no suite given", "Name one (gauntlet suite list) or give --resume RUN")
            from gauntlet.suite.load import load_suite

            loaded = load_suite(suite, quick)
            options = {
                "suite_path": str(loaded.path.resolve()), "quick": quick, "servers": _servers_option(servers),
                "repeats": repeat or loaded.suite.repeats,
                "restart_every": 1 if restart_between else loaded.suite.restart_every,
            }
            done = {}
            run_id = 0
        kinds, skipped = select_servers([entry.kind for entry in loaded.suite.servers], options["servers"])
        for line in skipped:
            err.print(f"[yellow]{line}[/yellow]")
        if not kinds:
            raise GauntletError("none of the suite's servers is installed", "Install one (see the lines above)")
        plan = SuitePlan(expand(loaded.suite, kinds, loaded.path.parent), options["repeats"], options["restart_every"], done)
        if resume is None:
            from gauntlet.host import snapshot

            run_id = store.begin_run(
                suite=loaded.suite.name, suite_text=loaded.text, options=options, environment=snapshot(), planned_cases=plan.total()
            )
        variant = " (quick)" if options["quick"] else ""
        err.print(f"run {run_id}: suite {loaded.suite.name}{variant}, {plan.total()} cases on {', '.join(kinds)}; stored in {db}")
        status = "failed"
        try:
            with SuiteProgress(err, plan.total()) as display:
                SuiteRunner(plan, StoreSink(store, run_id, display)).run()
            status = "complete"
        except (Interrupted, KeyboardInterrupt):
            status = "interrupted"
        finally:
            store.end_run(run_id, status)
        from gauntlet.report.html import write_report
        from gauntlet.report.tables import print_summary

        print_summary(out, store, run_id)
        write_report(store, [run_id], report)
        out.print(f"report: {report} (open it in a browser; it needs no network)")
    if status == "interrupted":
        err.print(f"[yellow]interrupted: the finished cases are stored; finish with: gauntlet suite run --resume {run_id} --db {db}[/yellow]")
        return EXIT_INTERRUPTED
    return 0


@app.command("list")
def list_command() -> int:
    """The shipped suites, with the studies they reproduce."""
    from gauntlet.suite.load import load_suite, shipped_names

    for name in shipped_names():
        loaded = load_suite(name)
        print(f"{name:12} {loaded.suite.description}", file=sys.stdout)
    return 0

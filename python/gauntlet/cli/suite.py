"""`gauntlet suite run|list`: a study's grid of cases, each stored the moment it ends, then reported."""

from __future__ import annotations

import contextlib
import tempfile
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from gauntlet import engine
from gauntlet.analysis.thresholds import Threshold, parse_thresholds
from gauntlet.cli import measuring, watching
from gauntlet.cli.agent_options import Agents, Scheduler, load_runner
from gauntlet.bounds import REPEATS, RUN_ID
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, bounded
from gauntlet.cli.progress import SuiteProgress
from gauntlet.errors import GauntletError
from gauntlet.model.record import CaseRecord
from gauntlet.report.labels import case_label
from gauntlet.report.output import console

if TYPE_CHECKING:
    from gauntlet.lab.observers import Feed, Observer
    from gauntlet.lab.suite import Prepared
    from gauntlet.store import Store

app = typer.Typer(help="Suites: a study's servers, workloads and grids, run, stored and reported.", no_args_is_help=True)

EXIT_INTERRUPTED = 130
DEFAULT_REPORT = Path("report.html")


class StoreSink:
    """Each record into the store as it ends, and onto the terminal."""

    def __init__(self, store: Store, run_id: int, display: SuiteProgress, feed: Feed) -> None:
        self._store = store
        self._run_id = run_id
        self._display = display
        self._feed = feed

    def case_started(self, params: dict[str, Any], repeat: int) -> None:
        from gauntlet.report.labels import case_label

        self._feed.next_case(params, repeat)
        self._display.started(case_label(params, repeat))

    def progress(self, progress: engine.Progress) -> None:
        self._display.update(progress)

    def case_done(self, record: CaseRecord) -> None:
        from gauntlet.report.tables import case_line

        self._store.add_case(self._run_id, record)
        self._feed.ended(record, self._run_id)
        self._display.finished(case_line(record))


def _new_run(suite: str | None, variant: tuple[bool, bool], servers: str | None, repeat: int | None,
             restart_between: bool) -> Prepared:
    """A new run's agenda, checked before the store is opened: a refused suite writes nothing.
    `variant` is (quick, full)."""
    from gauntlet.lab import suite as lab_suite
    from gauntlet.suite.load import load_suite

    if suite is None:
        raise GauntletError("no suite given", "Name one (gauntlet suite list), give a suite file, or --resume RUN")
    loaded = load_suite(suite, *variant)
    asked = [kind.strip() for kind in servers.split(",") if kind.strip()] if servers else None
    return lab_suite.prepare(loaded, lab_suite.new_options(loaded, asked, repeat, restart_between), {})


def _begin(store: Store, prepared: Prepared | None, resume: int | None) -> tuple[int, Prepared]:
    """The run to add cases to (new, or the one resumed) and what it has left to measure."""
    from gauntlet.lab import suite as lab_suite

    if resume is not None:
        done = store.done(resume)
        row = store.resume_run(resume)
        return resume, lab_suite.resumed(row.suite_text or "", row.options, done)
    assert prepared is not None
    from gauntlet.host import snapshot

    run_id = store.begin_run(
        suite=prepared.loaded.suite.name, suite_text=prepared.loaded.text, options=prepared.options,
        environment=snapshot(), planned_cases=prepared.agenda.total(),
    )
    return run_id, prepared


@app.command("run")
def run_command(
    suite: Annotated[str | None, typer.Argument(help="A shipped suite's name (quick, thesis, ...) or a suite file")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="The short variant (minutes on 2 cores)")] = False,
    full: Annotated[bool, typer.Option("--full", help="The study at its own length, where the default is scaled down")] = False,
    servers: Annotated[str | None, typer.Option("--servers", help="Only these kinds: nginx,apache-event,...")] = None,
    db: DbOption = DEFAULT_DB_PATH,
    resume: Annotated[int | None, bounded(RUN_ID, "--resume", help="Measure what this run is missing")] = None,
    repeat: Annotated[int | None, bounded(REPEATS, "--repeat", help="Measurements per case (default: the suite's)")] = None,
    restart_between: Annotated[bool, typer.Option("--restart-between", help="Restart the server between repeats")] = False,
    report: Annotated[Path, typer.Option("-o", "--report", help="Where to write the HTML report")] = DEFAULT_REPORT,
    fail_on: measuring.FailOnGiven = None,
    agents: Agents = None,
    scheduler: Scheduler = None,
    no_store: Annotated[
        bool, typer.Option("--no-store", help="Keep the run in a temporary database, gone once the report is written")
    ] = False,
    out_to: watching.Out = None,
    live: watching.Live = None,
) -> int:
    """Run a suite: every case on every installed server, stored as it ends; then the summary and the report."""
    out, err = console(), console(stderr=True)
    thresholds = parse_thresholds(fail_on, default=())
    if no_store and resume is not None:
        raise GauntletError("--resume reads the run from the results database", "Leave out --no-store")
    with contextlib.ExitStack() as scratch:
        if no_store:
            db = Path(scratch.enter_context(tempfile.TemporaryDirectory(prefix="gauntlet-suite-"))) / "results.db"
        return _run_suite(out, err, db, suite, resume, (quick, full), servers, repeat, restart_between, report, agents,
                          scheduler, thresholds, watching.observers(out_to, live, "suite"), stored=not no_store)


def _run_suite(out: Console, err: Console, db: Path, suite: str | None, resume: int | None, variant: tuple[bool, bool],
               servers: str | None, repeat: int | None, restart_between: bool, report: Path, agents: int | None,
               scheduler: str | None, thresholds: list[Threshold], observers: list[Observer], *, stored: bool) -> int:
    from gauntlet.lab.observers import Feed
    from gauntlet.lab.suite import Interrupted, SuiteRunner
    from gauntlet.report.html import write_report
    from gauntlet.report.tables import print_summary
    from gauntlet.store import Store

    if resume is not None and suite is not None:
        raise GauntletError("--resume takes the run's own suite and options", "Give --resume RUN without a suite")
    new = None if resume is not None else _new_run(suite, variant, servers, repeat, restart_between)
    with Store.open(db, create=resume is None) as store:
        run_id, prepared = _begin(store, new, resume)
        for line in prepared.skipped:
            err.print(f"[yellow]{escape(line)}[/yellow]")
        total = prepared.agenda.total()
        which = " (quick)" if prepared.options["quick"] else " (full)" if prepared.options.get("full") else ""
        where = f"stored in {db}" if stored else "not stored (--no-store)"
        err.print(f"run {run_id}: {prepared.loaded.suite.name}{which}, {total} cases on {', '.join(prepared.kinds)}, {where}")
        for line in prepared.agenda.departures():
            err.print(f"[yellow]{escape(line)}[/yellow]")
        status, crash = "failed", None
        try:
            feed = Feed("suite", observers, total, run_id=run_id)
            with SuiteProgress(err, total) as display, load_runner(agents, scheduler) as run_plan, feed:
                SuiteRunner(prepared.agenda, StoreSink(store, run_id, display, feed), run_plan).run()
            status = "complete"
        except (Interrupted, KeyboardInterrupt):
            status = "interrupted"
        except Exception as error:  # what was measured is still reported, and can be resumed
            crash = error
        finally:
            store.end_run(run_id, status)
        print_summary(out, store, run_id)
        write_report(store, [run_id], report)
        measured = [(case_label(c.params, c.repeat), c.result) for c in store.cases([run_id]) if c.result is not None]
        ended = len(store.done(run_id))
    out.print(f"report: {report} (open it in a browser; it needs no network)")
    if isinstance(crash, GauntletError):  # a stated cause and its fix, not a bug
        raise crash
    if crash is not None:
        rest = f"measure the rest with: gauntlet suite run --resume {run_id} --db {db}" if stored else "run it again"
        raise GauntletError(
            f"the suite stopped on an unexpected error: {_where(crash)}",
            f"The {ended} finished cases are in the summary and the report; {rest}; and report the error: it is a bug in Gauntlet",
        )
    if status == "interrupted":
        if stored:
            err.print(f"[yellow]interrupted: the finished cases are stored; measure the rest with: "
                      f"gauntlet suite run --resume {run_id} --db {db}[/yellow]")
        return EXIT_INTERRUPTED
    return measuring.fail_on(thresholds, [result for _, result in measured], [label for label, _ in measured])


def _where(error: Exception) -> str:
    """'FileNotFoundError: ... (cpu_window.py:49)': the error and the line that raised it."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} ({Path(frame.filename).name}:{frame.lineno})"


@app.command("list")
def list_command() -> int:
    """The shipped suites and the studies they reproduce."""
    from gauntlet.suite.load import load_suite, shipped_names

    out = console()
    for name in shipped_names():
        out.print(f"[bold]{name:12}[/bold] {escape(load_suite(name).suite.description)}")
    return 0

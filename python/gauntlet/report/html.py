"""The HTML report: one self-contained file (Plotly's JavaScript inlined) that opens from disk with
no network. Everything in it comes from the store; every stored string is escaped."""

from __future__ import annotations

import datetime
from pathlib import Path

import jinja2

from gauntlet import __version__
from gauntlet.report.charts import all_charts
from gauntlet.report.findings import study_findings
from gauntlet.report.inline_js import plotly_script
from gauntlet.report.output import write_atomically
from gauntlet.report.phases import phase_views
from gauntlet.report.points import grid_points
from gauntlet.report.specweb import specweb_table
from gauntlet.report.verdicts import verdict_views
from gauntlet.report.views import TABLES, configs, environment_table, run_line, tables
from gauntlet.store import Store

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("gauntlet.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render(store: Store, run_ids: list[int]) -> str:
    runs = [store.run(run_id) for run_id in run_ids]
    cases = store.cases(run_ids)
    points = grid_points(cases, by_run=len(run_ids) > 1)
    charts = [*all_charts(points), *phase_views(points)]
    return TEMPLATES.get_template("report.html.j2").render(
        title=f"Gauntlet report: {', '.join(f'run {r.run_id} ({r.suite})' for r in runs)}",
        run_lines=[run_line(run) for run in runs],
        findings=study_findings(runs, cases, store.noise_floors(), store.done),
        verdicts=verdict_views(points, store.noise_floors()),
        charts=charts,
        figures={chart.chart_id: chart.figure for chart in charts},
        tables=tables(points, (*TABLES, specweb_table)),
        configs=configs(points),
        environments=[environment_table(run) for run in runs],
        suites=[(run.run_id, run.suite_text) for run in runs if run.suite_text],
        generated=f"gauntlet {__version__}, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M UTC}",
        plotly_js=plotly_script(),
    )


def write_report(store: Store, run_ids: list[int], path: Path) -> None:
    write_atomically(path, render(store, run_ids))

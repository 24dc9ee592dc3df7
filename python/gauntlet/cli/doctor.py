"""`gauntlet doctor`: is this machine fit to measure at N connections, and what to fix."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from gauntlet import doctor, host
from gauntlet.bounds import CONNECTIONS
from gauntlet.cli.options import bounded
from gauntlet.cli.run import check_json_destination, write_json
from gauntlet.report.output import console

EXIT_FINDINGS = 1
STATUS_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red", "n/a": "dim"}


def doctor_command(
    connections: Annotated[int, bounded(CONNECTIONS, "-c", "--connections", help="The concurrency to check for")] = 1000,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the findings and the host snapshot here")] = None,
) -> int:
    """Check the limits the studies learned to tune: ulimit -n, somaxconn, ports, TIME_WAIT, governor, busy processes."""
    if json_path is not None:
        check_json_destination(json_path)
    out = console()
    snapshot = host.snapshot()
    findings = doctor.checks(snapshot, connections, host.busy_now())
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", title=f"For {connections:,} connections", title_justify="left")
    for column in ("status", "check", "found", "what it means"):
        table.add_column(column)
    for finding in findings:
        style = STATUS_STYLES[finding.status]
        table.add_row(f"[{style}]{finding.status}[/{style}]", finding.check, finding.found, finding.meaning)
    out.print(table)
    for finding in findings:
        if finding.fix:
            out.print(f"fix {finding.check}: {finding.fix}", highlight=False, soft_wrap=True)
    if json_path is not None:
        write_json(json_path, {
            "connections": connections,
            "findings": [dataclasses.asdict(f) for f in findings],
            "environment": snapshot,
        })
    if doctor.failed(findings):
        out.print("[bold red]results at this concurrency would be wrong or refused: fix the failed checks first[/bold red]")
        return EXIT_FINDINGS
    return 0

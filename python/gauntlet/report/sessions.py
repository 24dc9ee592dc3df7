"""Terminal output of session runs: per-page-type figures, QoS verdicts, capacity probes."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from gauntlet.analysis.capacity import Capacity
from gauntlet.analysis.qos import Verdict
from gauntlet.units import format_count, format_duration_us


def pages_table(sessions: dict[str, Any]) -> Table:
    table = Table(title="Pages", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    for column in ("page", "type", "count", "errors", "failed checks", "p50", "p90", "p99", "good", "tolerable", "fail"):
        table.add_column(column, justify="left" if column in ("page", "type") else "right")
    for name, page in sorted(sessions["pages"].items()):
        count = page["count"]
        good, tolerable, fail = (f"{page[c] / count:.1%}" if count else "-" for c in ("good", "tolerable", "fail"))
        times = page["page_time_us"]
        table.add_row(
            name, page["type"], format_count(count), format_count(page["errors"]), format_count(page.get("invalid", 0)),
            format_duration_us(times["p50"]), format_duration_us(times["p90"]), format_duration_us(times["p99"]),
            good, tolerable, fail,
        )
    return table


def verdict_line(verdict: Verdict) -> str:
    if verdict.valid:
        return "[green]QoS: VALID[/green] (every page type met its GOOD and GOOD+TOLERABLE shares)"
    failing = ", ".join(
        f"{p.name} ({p.good_share:.1%} good, {p.good_or_tolerable_share:.1%} good or tolerable"
        + (f", {p.invalid} failed checks)" if p.invalid else ")")
        for p in verdict.pages
        if not p.valid
    )
    return f"[red]QoS: INVALID[/red]: {failing}"


def print_sessions(console: Console, result: dict[str, Any], verdict: Verdict) -> None:
    sessions = result["sessions"]
    console.print(
        f"users: {format_count(sessions['users_started'])} started, {format_count(sessions['users_completed'])} "
        f"completed, {format_count(sessions['users_dropped'])} dropped; "
        f"{format_count(sessions['not_modified'])} revalidations answered 304"
    )
    console.print(pages_table(sessions))
    console.print(verdict_line(verdict))


#: How a capacity level reads: simultaneous sessions, or the busiest phase's arrival rate.
LEVEL_WORDS = {"users": ("users", "simultaneous sessions"), "peak_users_per_s": ("users/s", "new users/s at the peak")}


def probe_line(level: int, result: dict[str, Any], verdict: Verdict, level_name: str = "users") -> str:
    worst = min(verdict.pages, key=lambda p: p.good_share)
    mark = "[green]valid[/green]" if verdict.valid else "[red]invalid[/red]"
    unit = LEVEL_WORDS[level_name][0]
    line = (
        f"{format_count(level).rjust(8)} {unit}  {mark}  worst page {worst.name}: {worst.good_share:.1%} good, "
        f"{worst.good_or_tolerable_share:.1%} good or tolerable  ({format_count(result['requests_per_s'])} req/s)"
    )
    labels = result["bottleneck"]["labels"]
    return f"{line}  [yellow]{', '.join(labels)}[/yellow]" if labels else line


def capacity_line(capacity: Capacity, level_name: str = "users") -> str:
    upper = "unbounded (no level up to the ceiling failed)" if capacity.first_invalid is None else format_count(capacity.first_invalid)
    line = (
        f"capacity: {format_count(capacity.users)} {LEVEL_WORDS[level_name][1]}; the true capacity lies in "
        f"[{format_count(capacity.users)}, {upper}) after {len(capacity.probes)} probes"
    )
    if capacity.budget_spent:
        line += ". The probe budget ran out before the bracket closed: raise --max-probes"
    if capacity.ceiling_reached:
        line += ". Every level up to the load file's max_users held: raise max_users"
    return line

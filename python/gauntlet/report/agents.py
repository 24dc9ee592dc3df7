"""Terminal table of a distributed run's agents: each one's slice and figures, so that an agent
that saturated, fell behind its rate or was lost stands out."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from gauntlet.analysis.bottleneck import SATURATED_SHARE
from gauntlet.units import format_count, format_duration_us


def agents_table(agents: list[dict[str, Any]]) -> Table:
    """One row per agent; `sent/s` (the rate it held) only under a rate."""
    under_rate = any(agent["slice"]["rate_per_s"] is not None for agent in agents)
    table = Table(title="Agents", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    columns = ("agent", "state", "conns", "requests", "req/s", *(["sent/s"] if under_rate else []), "p99", "busiest")
    table.add_column("agent", no_wrap=True, min_width=len("127.0.0.1:65535"))
    for column in columns[1:]:
        table.add_column(column, justify="left" if column == "state" else "right")
    for agent in agents:
        address = agent["address"].removeprefix("tcp://")
        if agent["requests"] is None:
            table.add_row(address, f"[red]{agent['state']}[/red]", format_count(agent["slice"]["connections"]))
            continue
        share = agent["client"]["busiest_thread_share"]
        p99 = agent["latency_us"]["p99"]
        table.add_row(
            address,
            "ok" if agent["state"] == "completed" else f"[yellow]{agent['state']}[/yellow]",
            format_count(agent["slice"]["connections"]),
            format_count(agent["requests"]),
            format_count(agent["requests_per_s"]),
            *([format_count(agent["achieved_rate_per_s"])] if under_rate else []),
            format_duration_us(p99) if agent["latency_us"]["count"] else "-",
            f"[yellow]{share:.0%} saturated[/yellow]" if share >= SATURATED_SHARE else f"{share:.0%}",
        )
    return table


def print_agents(console: Console, result: dict[str, Any]) -> None:
    """Nothing for a run on this machine alone; for a distributed run, the table and every reason."""
    agents = result.get("agents")
    if not agents:
        return
    console.print(agents_table(agents))
    for agent in agents:
        if agent["reason"] is not None:
            console.print(f"[yellow]agent {agent['address']}: {agent['state']}: {agent['reason']}[/yellow]")
    if result["partial"] and any(agent["state"] in ("lost", "unreachable") for agent in agents):
        console.print("[yellow]PARTIAL: the figures above cover the agents that kept running[/yellow]")

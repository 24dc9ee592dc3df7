"""`gauntlet servers`: every server kind and backend combination, with its version, or why it
cannot run here (unsupported, or not installed with the `apt-get install` that fixes it)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from gauntlet.report.output import console

if TYPE_CHECKING:
    from gauntlet.servers.registry import AppCombination, Combination


def _how(pair: Combination) -> str:
    """How the server reaches the backend: its gateway, and the pool it talks to."""
    from gauntlet.servers.backends.catalog import backend_named, pool_for

    assert pair.gateway is not None
    pool = pool_for(backend_named(pair.backend), pair.gateway)
    return f"{pair.gateway} → {pool}" if pool else pair.gateway


def kinds_table(versions: dict[str, tuple[str | None, str | None]]) -> Table:
    from gauntlet.servers.registry import KINDS

    table = Table(title="Server kinds", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    table.add_column("kind")
    table.add_column("version, or why not here")
    table.add_column("HTTP/2 (--http2)")
    for kind, (version, reason) in versions.items():
        no_http2 = KINDS[kind].no_http2
        table.add_row(kind, version or f"[yellow]{reason}[/yellow]", "h2, h2c" if no_http2 is None else f"[dim]no: {no_http2}[/dim]")
    return table


def combinations_table(pairs: list[Combination]) -> tuple[Table, list[str]]:
    """Kinds down, backends across; each cell the way in and the backend's version. The reasons a
    pair is unsupported are notes under the table, one per distinct reason."""
    from gauntlet.servers.backends.catalog import BACKENDS
    from gauntlet.servers.registry import KINDS

    table = Table(title="Backends by server kind", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    table.add_column("kind")
    for name in BACKENDS:
        table.add_column(name)
    notes: list[str] = []
    for kind in KINDS:
        cells = []
        for pair in (p for p in pairs if p.kind == kind):
            if not pair.supported:
                reason = (pair.reason or "").removeprefix("unsupported: ")
                if reason not in notes:
                    notes.append(reason)
                cells.append(f"[dim]no ({notes.index(reason) + 1})[/dim]")
            elif pair.reason is not None:
                cells.append(f"[yellow]{pair.reason.replace('not installed: ', '')}[/yellow]\n{_how(pair)}")
            else:
                cells.append(f"{pair.version}\n[dim]{_how(pair)}[/dim]")
        table.add_row(kind, *cells)
    return table, [f"({n}) unsupported: {reason}" for n, reason in enumerate(notes, 1)]


def apps_table(apps: list[AppCombination]) -> Table:
    """Kinds down, applications across: the backends each runs on there, or why not."""
    from gauntlet.servers.registry import KINDS

    names = list(dict.fromkeys(a.app for a in apps))
    table = Table(title="Applications by server kind", title_justify="left", box=box.SIMPLE_HEAD, header_style="bold")
    table.add_column("kind")
    for name in names:
        table.add_column(name)
    for kind in KINDS:
        cells = []
        for name in names:
            here = [a for a in apps if a.app == name and a.kind == kind]
            runs = [a.backend for a in here if a.reason is None]
            installable = [a.reason for a in here if a.reason and a.reason.startswith("not installed")]
            if runs:
                cells.append(", ".join(runs))
            elif installable:
                cells.append(f"[yellow]{installable[0]}[/yellow]")
            else:
                cells.append("[dim]no: no PHP backend on this kind[/dim]")
        table.add_row(kind, *cells)
    return table


def as_json(
    versions: dict[str, tuple[str | None, str | None]], pairs: list[Combination], apps: list[AppCombination]
) -> dict[str, Any]:
    from gauntlet.servers.registry import KINDS

    return {
        "kinds": [{"kind": k, "version": v, "reason": r, "no_http2": KINDS[k].no_http2} for k, (v, r) in versions.items()],
        "combinations": [
            {"kind": p.kind, "backend": p.backend, "gateway": p.gateway, "version": p.version, "reason": p.reason}
            for p in pairs
        ],
        "apps": [{"app": a.app, "kind": a.kind, "backend": a.backend, "reason": a.reason} for a in apps],
    }


def servers_command(
    json_output: Annotated[bool, typer.Option("--json", help="The same as JSON on stdout")] = False,
) -> int:
    """Every server kind and backend Gauntlet can start, with versions, or why not."""
    # Imported here: every other command would pay for loading the drivers at start-up.
    from gauntlet.servers.registry import KINDS, app_combinations, combinations

    versions = {name: (found.version, found.reason) for name, found in ((k, KINDS[k].availability()) for k in KINDS)}
    pairs = combinations()
    apps = app_combinations()
    out = console()
    if json_output:
        out.print_json(json.dumps(as_json(versions, pairs, apps)))
        return 0
    out.print(kinds_table(versions))
    table, notes = combinations_table(pairs)
    out.print(table)
    for note in notes:
        out.print(note, highlight=False)
    out.print(apps_table(apps))
    return 0

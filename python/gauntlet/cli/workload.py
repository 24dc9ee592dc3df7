"""`gauntlet workload write DIR`: the standard workload files, byte-exact."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gauntlet import engine
from gauntlet.errors import GauntletError

app = typer.Typer(help="The standard workload (ST-1..3, the 10 KB PNG).", no_args_is_help=True)


@app.command("write")
def write_command(directory: Annotated[Path, typer.Argument(help="Where to write the files")]) -> int:
    """Write the standard workload files into DIRECTORY."""
    files = engine.workload_files()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, body in files.items():
            (directory / name).write_bytes(body)
    except OSError as err:
        raise GauntletError(f"cannot write into {str(directory)!r} ({err.strerror})", "Pick a writable directory") from None
    for name, body in files.items():
        print(f"{directory / name}  {len(body):,} bytes")
    return 0

"""Options that several commands share, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: Where suites store their runs and where report, compare and export read them, unless --db says.
DEFAULT_DB_PATH = Path("results.db")
DbOption = Annotated[Path, typer.Option("--db", help="The results database (SQLite file)")]

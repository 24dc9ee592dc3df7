"""Options that several commands share, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: Where the measuring commands store their runs and where report, compare and export read them, unless --db says.
DEFAULT_DB_PATH = Path("results.db")
DbOption = Annotated[Path, typer.Option("--db", help="The results database (SQLite file)")]
NoStoreOption = Annotated[bool, typer.Option("--no-store", help="Keep the results out of the results database")]
Http2Option = Annotated[
    bool, typer.Option("--http2", help="HTTP/2: h2 through ALPN for https://, h2c with prior knowledge for http://")
]
StreamsOption = Annotated[int | None, typer.Option("--streams", help="--http2: concurrent streams per connection (default 1)")]


def store_path(db: Path, no_store: bool) -> Path | None:
    """Where a measuring command stores its run: --db, or nowhere with --no-store."""
    return None if no_store else db

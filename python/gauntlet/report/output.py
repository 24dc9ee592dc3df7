"""Files the report commands write: whole or not at all."""

from __future__ import annotations

from pathlib import Path

from gauntlet.errors import GauntletError


def write_atomically(path: Path, text: str) -> None:
    """Written to a temporary name beside `path`, then moved over it: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as err:
        partial.unlink(missing_ok=True)
        raise GauntletError(f"cannot write {str(path)!r} ({err.strerror})", "Check the directory and its permissions") from None

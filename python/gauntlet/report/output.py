"""Where the commands' output goes: consoles as wide as their destination, and files written
whole or not at all."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from gauntlet.errors import GauntletError

#: The width of output that is not a terminal (a file, a pipe): no table drops, cuts or folds a
#: column to fit 80 characters; whoever reads the file wraps it.
NOT_A_TERMINAL_WIDTH = 1000


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr): a terminal's own width; elsewhere NOT_A_TERMINAL_WIDTH,
    whatever COLUMNS says (a shell or a test harness may export the terminal's 80)."""
    on_terminal = Console(stderr=stderr)
    if on_terminal.is_terminal:
        return on_terminal
    return Console(stderr=stderr, width=NOT_A_TERMINAL_WIDTH)


def write_atomically(path: Path, text: str) -> None:
    """Written to a temporary name beside `path`, then moved over it: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as err:
        partial.unlink(missing_ok=True)
        raise GauntletError(f"cannot write {str(path)!r} ({err.strerror})", "Check the directory and its permissions") from None

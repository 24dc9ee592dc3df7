"""SIGTERM and SIGHUP end a command the way Ctrl-C does: the load is cancelled, what was measured
is printed and written (the --json file, the store), the servers Gauntlet started are stopped. The
exit code then says which signal it was (128 + its number)."""

from __future__ import annotations

import signal
from types import FrameType

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def end_like_ctrl_c() -> None:
    """From now on, SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread."""
    for ending in ENDING_SIGNALS:
        if signal.getsignal(ending) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(ending, _interrupt)


def interrupted_exit_code(ctrl_c_code: int) -> int:
    """128 + the signal that ended the command, or `ctrl_c_code` when it was Ctrl-C."""
    return 128 + _received[0] if _received else ctrl_c_code

"""Run the `gauntlet` CLI as a subprocess: bounded in time, always terminated."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GAUNTLET = [sys.executable, "-m", "gauntlet"]


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str
    elapsed_s: float


def run_cli(*args: str | Path, timeout_s: float = 60.0) -> Finished:
    began = time.monotonic()
    done = subprocess.run([*GAUNTLET, *map(str, args)], capture_output=True, text=True, timeout=timeout_s)
    return Finished(done.returncode, done.stdout, done.stderr, time.monotonic() - began)


class Running:
    """A CLI process in the background; the context's exit kills it if it is still there."""

    def __init__(self, *args: str | Path) -> None:
        self.proc = subprocess.Popen(
            [*GAUNTLET, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._stderr_lines: list[str] = []
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    @property
    def stderr_lines(self) -> list[str]:
        return list(self._stderr_lines)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr_lines.append(line)

    def wait_for_stderr(self, pattern: str, timeout_s: float) -> None:
        """Until a line of the process's stderr matches `pattern`: a start it announces, not a guess at its length."""
        deadline = time.monotonic() + timeout_s
        while not any(re.search(pattern, line) for line in list(self._stderr_lines)):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"no stderr line matched {pattern!r} in {timeout_s} s: {''.join(self._stderr_lines)}")
            time.sleep(0.02)

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=10)
        self._stderr_reader.join(timeout=10)

    def interrupt_and_wait(self, timeout_s: float) -> Finished:
        return self.end_with(signal.SIGINT, timeout_s)

    def end_with(self, signum: int, timeout_s: float) -> Finished:
        """Send `signum` and wait for the exit; elapsed_s counts from the signal."""
        began = time.monotonic()
        self.proc.send_signal(signum)
        return self.wait(timeout_s, began)

    def wait(self, timeout_s: float, began: float | None = None) -> Finished:
        began = time.monotonic() if began is None else began
        # communicate() reads stderr too, racing the reader thread: what it takes is the rest of it.
        stdout, rest = self.proc.communicate(timeout=timeout_s)
        self._stderr_reader.join(timeout=timeout_s)
        stderr = "".join(self._stderr_lines) + (rest or "")
        return Finished(self.proc.returncode, stdout, stderr, time.monotonic() - began)

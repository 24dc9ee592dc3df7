"""Run the `gauntlet` CLI as a subprocess: bounded in time, always terminated."""

from __future__ import annotations

import signal
import subprocess
import sys
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

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=10)

    def interrupt_and_wait(self, timeout_s: float) -> Finished:
        began = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        stdout, stderr = self.proc.communicate(timeout=timeout_s)
        return Finished(self.proc.returncode, stdout, stderr, time.monotonic() - began)

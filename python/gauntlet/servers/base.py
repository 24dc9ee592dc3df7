"""What every server driver hands back: a running server, its address, its processes, its stop."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

import psutil

from gauntlet.servers.process import LOOPBACK, stop_tree, tree


def new_workdir(kind: str) -> Path:
    """A private directory for one server's config, pid file, logs and temp files.

    World-traversable (0755), so that workers which drop privileges (nginx as `nobody`) can read the
    docroot inside it.
    """
    workdir = Path(tempfile.mkdtemp(prefix=f"gauntlet-{kind}-"))
    workdir.chmod(0o755)
    return workdir


class ServerInstance:
    """A server under test started by a driver, in its own work directory.

    A context manager: leaving the `with` block stops it, also when the block raised. `stop()` ends
    the whole process tree by pid (a polite signal, then SIGKILL) and removes the work directory; it
    is idempotent.
    """

    def __init__(
        self,
        *,
        kind: str,
        proc: subprocess.Popen[bytes],
        port: int,
        workdir: Path,
        config_text: str,
        host: str = LOOPBACK,
        scheme: str = "http",
        stop_signal: int = signal.SIGTERM,
        grace_s: float = 5.0,
    ) -> None:
        self.kind = kind
        self.host = host
        self.scheme = scheme
        self.port = port
        self.workdir = workdir
        self.config_text = config_text
        self._proc = proc
        self._stop_signal = stop_signal
        self._grace_s = grace_s
        self._known: dict[int, psutil.Process] = {}
        self._stopped = False

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/"

    def pids(self) -> list[int]:
        """The main process and all its descendants now (empty once stopped)."""
        if self._stopped:
            return []
        procs = tree(self._proc.pid)
        self._known.update((p.pid, p) for p in procs)
        return [p.pid for p in procs]

    def stop(self) -> None:
        if self._stopped:
            return
        self.pids()
        self._stopped = True
        try:
            stop_tree(
                self._proc,
                known=self._known.values(),
                sig=self._stop_signal,
                grace_s=self._grace_s,
            )
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else f"pid {self._proc.pid}"
        return f"<ServerInstance {self.kind} {self.url} {state}>"

"""What every server driver hands back: a running server, its address, its processes, its stop."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

import jinja2
import psutil

from gauntlet.engine import self_signed_certificate
from gauntlet.errors import GauntletError
from gauntlet.servers.process import LOOPBACK, log_tail, stop_tree, tree


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


TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)


def unprivileged_user() -> str:
    """`nobody` and its primary group (Debian calls it `nogroup`), for the `user` directive as root."""
    group = grp.getgrgid(pwd.getpwnam("nobody").pw_gid).gr_name
    return f"nobody {group}"


def write_docroot(docroot: Path, files: Mapping[str, bytes]) -> None:
    """Write the files, readable by everyone (the workers may run as `nobody`)."""
    docroot.mkdir(mode=0o755, parents=True, exist_ok=True)
    for name, body in files.items():
        path = docroot / name
        path.write_bytes(body)
        path.chmod(0o644)


def write_certificate(workdir: Path) -> None:
    """A self-signed certificate made for this instance: workdir/tls/{cert,key}.pem."""
    cert_pem, key_pem = self_signed_certificate()
    (workdir / "tls").mkdir(mode=0o755)
    (workdir / "tls" / "cert.pem").write_text(cert_pem)
    (workdir / "tls" / "key.pem").write_text(key_pem)


def find_binary(name: str) -> str | None:
    """A server's executable: PATH first, then /usr/sbin, which is not on a user's PATH."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path("/usr/sbin") / name
    return str(candidate) if os.access(candidate, os.X_OK) else None


def wait_for_workers(instance: ServerInstance, workers: int, timeout_s: float, log_path: Path) -> None:
    """The first worker may answer before the master has forked the last one; wait for all."""
    deadline = time.monotonic() + timeout_s
    while len(instance.pids()) < 1 + workers:
        if time.monotonic() >= deadline:
            raise GauntletError(
                f"{instance.kind} answered but has {len(instance.pids()) - 1} of {workers} "
                f"workers after {timeout_s:g} s; its log ends: {log_tail(log_path)}",
                "fix what the log says (too many workers for this machine's limits?)",
            )
        time.sleep(0.01)

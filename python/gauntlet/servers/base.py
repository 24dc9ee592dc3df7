"""What every server driver hands back: a running server, its address, its processes, its stop."""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import jinja2
import psutil

from gauntlet.engine import self_signed_certificate
from gauntlet.errors import GauntletError
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import LOOPBACK, READY_PATH, answers_h2c, answers_http, processes_under, stop_processes
from gauntlet.servers.spec import ServerSpec

VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


@dataclass
class BackendProcess:
    """A pool the server talks to (PHP-FPM, uWSGI, fcgiwrap): started before it, stopped after it."""

    name: str
    proc: subprocess.Popen[bytes]
    stop_signal: int
    #: Its rendered config, or its command line when it has no config file.
    config_text: str
    log_path: Path
    #: Its loopback TCP port, when it listens on one (None: a unix socket).
    port: int | None = None


class ServerInstance:
    """A server under test started by a driver, in its own work directory.

    A context manager: leaving the `with` block stops it, also when the block raised. `stop()` ends
    all its processes by pid (a polite signal, then SIGKILL), then the backends' processes, then
    anything left in its cgroup, and releases its premises (cgroup, work dir, guard); it is idempotent.
    """

    def __init__(
        self,
        *,
        kind: str,
        proc: subprocess.Popen[bytes],
        port: int,
        premises: Premises,
        config_text: str,
        host: str = LOOPBACK,
        scheme: str = "http",
        stop_signal: int = signal.SIGTERM,
        grace_s: float = 5.0,
        spec: ServerSpec | None = None,
        backends: Sequence[BackendProcess] = (),
        access_log: Path | None = None,
        flush_access_log: Callable[[ServerInstance], None] | None = None,
        preface_log_marker: bytes | None = None,
        holders: int | None = 1,
        https_port: int | None = None,
        h2c_only: bool = False,
    ) -> None:
        self.kind = kind
        self.host = host
        self.scheme = scheme
        self.port = port
        #: The second, HTTPS port of a server that also serves HTTPS (`spec.also_https`).
        self.https_port = https_port
        self.workdir = premises.workdir
        #: Every config Gauntlet rendered for it (the server's, then its backend pool's).
        self.config_text = config_text
        self.spec = spec or ServerSpec(kind)
        #: Filled by registry.start_server: the server's and the backend's versions, the workers it
        #: runs (the spec's, or the kind's default) and what they are (processes, threads, schedulers).
        self.version: str | None = None
        self.backend_version: str | None = None
        self.workers: int | None = None
        self.worker_unit: str | None = None
        self.backends = list(backends)
        self.cgroup = premises.cgroup
        #: One line per request when the spec asks for an access log; the first field tells
        #: connections apart (a client port or a connection serial number).
        self.access_log = access_log
        self._flush_access_log = flush_access_log
        #: What marks an access-log line that is no request: lighttpd logs each HTTP/2 connection's
        #: preface as `"PRI * HTTP/2.0"` when the connection ends.
        self.preface_log_marker = preface_log_marker
        #: The processes that share its connections, each under its own open-files limit (None: a
        #: process per connection); servers/sizing.py says when a run brings more than they can hold.
        self.holders = holders
        self._h2c_only = h2c_only
        self._premises = premises
        self._proc = proc
        self._stop_signal = stop_signal
        self._grace_s = grace_s
        self._known: dict[int, dict[int, psutil.Process]] = {}
        self._stopped = False

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/"

    @property
    def https_url(self) -> str | None:
        """The second port's URL, where `scheme: https` pages go (None: one scheme only)."""
        return None if self.https_port is None else f"https://{self.host}:{self.https_port}/"

    @property
    def main_pid(self) -> int:
        return self._proc.pid

    @property
    def ports(self) -> list[int]:
        """Every loopback port it listens on: the server's, and its backend's when on TCP."""
        https = [] if self.https_port is None else [self.https_port]
        return [self.port, *https, *(b.port for b in self.backends if b.port is not None)]

    def identity_text(self) -> str:
        """The rendered config with what differs between two starts of the same setup put as
        placeholders: the work directory (and other directories of this instance) as {workdir},
        {scratch1}..., each loopback port it listens on as {port}, {port1}...: two identical setups
        give the same text, and so the same `config_sha256`."""
        text = self.config_text
        places = {str(self.workdir): "{workdir}", self.workdir.name: "{workdir_name}"}  # the name: its cgroup's
        places |= {str(path): f"{{scratch{n}}}" for n, path in enumerate(self._premises.scratch, 1)}
        for path in sorted(places, key=len, reverse=True):  # a longer path before its prefix
            text = text.replace(path, places[path])
        for n, port in enumerate(p for p in self.ports if p):
            text = re.sub(rf"(?<![\d.]){port}(?!\d)", "{port}" if n == 0 else f"{{port{n}}}", text)
        return text

    def setup(self) -> dict[str, Any]:
        """What ran, for a result (`server_setup`): kind, versions, workers, backend, and the rendered
        config by its SHA-256 (of `identity_text`) and size (the text itself is kept in the store,
        with the case)."""
        config = self.config_text.encode()
        return {
            "kind": self.kind,
            "version": self.version,
            "workers": self.workers,
            "worker_unit": self.worker_unit,
            "backend": self.spec.backend,
            "backend_version": self.backend_version,
            "tls": self.scheme == "https",
            "also_https": self.https_port is not None,
            "config_sha256": hashlib.sha256(self.identity_text().encode()).hexdigest(),
            "config_bytes": len(config),
        }

    def backend_pids(self) -> list[int]:
        """The main process of each backend pool."""
        return [b.proc.pid for b in self.backends]

    def exits(self) -> list[tuple[str, int]]:
        """The processes Gauntlet started for it that have exited, by name, with their status (-N:
        signal N): its main process (a master whose worker died and was replaced has not) and each
        backend's (PHP-FPM, uWSGI, MariaDB, BeSim). Empty once stopped."""
        if self._stopped:
            return []
        roots = [(self.kind, self._proc), *((b.name, b.proc) for b in self.backends)]
        return [(name, status) for name, proc in roots if (status := proc.poll()) is not None]

    def answers(self, timeout_s: float) -> bool:
        """Whether it still answers as it did when it was ready (HTTP, or the HTTP/2 preface on an
        h2c-only server) within `timeout_s`, with none of its processes exited."""
        if self.exits():
            return False
        if self._h2c_only:
            return answers_h2c(self.host, self.port, timeout_s)
        return answers_http(self.host, self.port, READY_PATH, self.scheme == "https", timeout_s)

    def _tree(self, root: subprocess.Popen[bytes]) -> list[int]:
        if self._stopped:
            return []
        procs = processes_under(root.pid)
        self._known.setdefault(root.pid, {}).update((p.pid, p) for p in procs)
        return [p.pid for p in procs]

    def pids(self) -> list[int]:
        """The server's processes, then each backend pool's (empty once stopped)."""
        return [pid for root in [self._proc, *(b.proc for b in self.backends)] for pid in self._tree(root)]

    def flush_access_log(self) -> Path:
        """The access log, flushed first where the server buffers it."""
        if self.access_log is None:
            raise GauntletError(f"{self.kind} was started without an access log", "start it with access_log on")
        if self._flush_access_log is not None and not self._stopped:
            self._flush_access_log(self)
        return self.access_log

    def access_log_lines(self) -> list[str]:
        """The access log so far (flushed first where the server buffers it)."""
        log = self.flush_access_log()
        return log.read_text().splitlines() if log.exists() else []

    def stop(self) -> None:
        if self._stopped:
            return
        self.pids()
        self._stopped = True
        failed: Exception | None = None
        try:
            roots = [(self._proc, self._stop_signal), *((b.proc, b.stop_signal) for b in self.backends)]
            for root, sig in roots:
                try:  # one process group that would not stop must not leave the next one running
                    stop_processes(root, known=self._known.get(root.pid, {}).values(), sig=sig, grace_s=self._grace_s)
                except Exception as exc:
                    failed = failed or exc
        finally:
            self._premises.release(self._grace_s)
        if failed is not None:
            raise failed

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


def write_docroot(docroot: Path, files: Mapping[str, bytes], mode: int = 0o644) -> None:
    """Write the files, readable by everyone (the workers may run as `nobody`)."""
    docroot.mkdir(mode=0o755, parents=True, exist_ok=True)
    for name, body in files.items():
        path = docroot / name
        path.write_bytes(body)
        path.chmod(mode)


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


def version_in(text: str) -> str:
    """The first version number in `text`."""
    found = VERSION.search(text)
    return found.group(1) if found else "unknown"


def program_version(argv: list[str]) -> str:
    """The first version number a program prints about itself (some print it on stderr)."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    return version_in(done.stdout + done.stderr)

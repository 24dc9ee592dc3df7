"""The built-in reference server as a server under test: `python -m gauntlet serve` in its own process.

Its own process, so that a monitor of the server's processes never counts the client's CPU. It binds port 0
and announces the port on its first stdout line, so there is no free-port race here.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import log_tail, spawn

#: The lines `gauntlet serve` prints (engine/src/server/command.rs): its address once it listens,
#: on stdout; its counts, every process's added, when it stops, on stderr.
LISTENING = re.compile(r"^gauntlet serve: listening on (?P<scheme>https?)://(?P<host>[^/]+):(?P<port>\d+)/$")
STOPPED = re.compile(r"stopped after (?P<requests>\d+) requests on (?P<connections>\d+) connections")
POLL_INTERVAL_S = 0.02


def start_builtin(
    threads: int = 2,
    processes: int = 1,
    stall_ms: int = 0,
    stall_every_ms: int = 0,
    tls: bool = False,
    ready_timeout_s: float = 10.0,
    tls_version: str | None = None,
    cipher: str | None = None,
) -> ServerInstance:
    """Start `gauntlet serve` on 127.0.0.1, port 0, and return once it has announced its address.

    With `tls`, `tls_version` ("1.2" or "1.3") and `cipher` (IANA name) pin what it accepts; a pin
    that cannot work is the server's one-line error.
    """
    argv = [sys.executable, "-m", "gauntlet", "serve", "--port", "0", "--threads", str(threads), "--processes", str(processes)]
    argv += ["--stall-ms", str(stall_ms), "--stall-every-ms", str(stall_every_ms)] + (["--tls"] if tls else [])
    argv += ["--tls-version", tls_version] if tls_version else []
    argv += ["--cipher", cipher] if cipher else []
    premises = Premises.open("builtin")
    log_path = premises.workdir / "stderr.log"
    stdout_path = premises.workdir / "stdout.log"
    try:
        proc = spawn(argv, cwd=premises.workdir, log_path=log_path, stdout_path=stdout_path, premises=premises)
    except BaseException:
        premises.release()
        raise
    instance = ServerInstance(
        kind="builtin",
        proc=proc,
        port=0,
        premises=premises,
        config_text=shlex.join(argv),
        scheme="https" if tls else "http",
        holders=processes,
    )
    try:
        instance.host, instance.port = _announced_address(
            proc, stdout_path, log_path, ready_timeout_s
        )
    except BaseException:
        instance.stop()
        raise
    return instance


def _announced_address(
    proc: subprocess.Popen[bytes], stdout_path: Path, log_path: Path, timeout_s: float
) -> tuple[str, int]:
    """Wait (bounded) for the first complete stdout line and parse the address out of it."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = stdout_path.read_text(errors="replace")
        if "\n" in text:
            first = text.split("\n", 1)[0].strip()
            match = LISTENING.match(first)
            if match is None:
                raise GauntletError(
                    f"gauntlet serve printed {first!r} instead of its address; "
                    f"stderr ends: {log_tail(log_path)}",
                    "run `python -m gauntlet serve` by hand to see what it does",
                )
            return match["host"], int(match["port"])
        status = proc.poll()
        if status is not None:
            raise GauntletError(
                f"gauntlet serve exited with status {status} before announcing its address; "
                f"stderr ends: {log_tail(log_path)}",
                "fix what the log says",
            )
        if time.monotonic() >= deadline:
            raise GauntletError(
                f"gauntlet serve did not announce its address within {timeout_s:g} s; "
                f"stderr ends: {log_tail(log_path)}",
                "check the log above; a slow machine may need a longer ready timeout",
            )
        time.sleep(POLL_INTERVAL_S)

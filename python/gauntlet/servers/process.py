"""Server processes: spawn in their own session, wait until they answer HTTP, stop all of a server's processes by pid.

Everything here works on pids the caller started; nothing searches processes by name.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from gauntlet.errors import GauntletError
from gauntlet.servers.pids import running, wait_gone

if TYPE_CHECKING:
    from gauntlet.servers.premises import Premises

LOOPBACK = "127.0.0.1"
PROBE_INTERVAL_S = 0.05
PROBE_TIMEOUT_S = 0.5
#: How long a SIGKILLed server may take to exit: it cannot refuse, but with thousands of its
#: processes exiting on two cores (Apache prefork with 1,024 started) its own exit waits its turn.
KILLED_EXIT_S = 60.0


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port that is free on `host` right now, chosen by the OS (bind to port 0).

    For servers that cannot bind port 0 and report the port back (nginx, apache2, ...). The port is
    released before the server binds it, so another process could take it in between. The window is a
    few milliseconds, the OS hands out ephemeral ports round-robin, and a lost race is not silent: the
    server fails to bind, exits, and `wait_ready` raises with its log tail. That is acceptable for a lab
    that starts one server at a time; servers that can take port 0 should (the built-in one does).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def spawn(
    argv: list[str],
    *,
    cwd: Path,
    log_path: Path,
    stdout_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    premises: Premises | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` in its own session (so a Ctrl-C on our terminal does not reach it); with an
    instance's `premises`, inside its cgroup from its first instruction, and watched by its guard.

    stderr goes to `log_path`, stdout to `stdout_path` (or to `log_path` too). Files, not pipes: a
    server that logs a lot can never block on a pipe nobody reads. `env` adds to our environment.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if shutil.which(argv[0]) is None:
        raise GauntletError(f"cannot start {argv[0]}: not found", "check that the program is installed and executable")
    with open(log_path, "ab") as log, open(stdout_path or log_path, "ab") as out:
        cgroup = premises.cgroup if premises else None
        try:
            proc = subprocess.Popen(
                cgroup.wrap(argv) if cgroup else argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=log,
                start_new_session=True,
                env={**os.environ, **env} if env else None,
            )
        except OSError as exc:
            raise GauntletError(
                f"cannot start {argv[0]}: {exc.strerror}",
                "check that the program is installed and executable",
            ) from exc
    if premises is not None:
        premises.guard.watch(proc.pid)
    return proc


#: A Java stack frame (`at pkg.Class.method(File.java:12)`, `... 13 more`): the JVM servers' logs
#: end in these, below the lines that say what went wrong.
STACK_FRAME = re.compile(r"^(at \S+\(.*\)|\.\.\. \d+ more)$")


def shortened(line: str, max_chars: int) -> str:
    """The line, or its start and end around "...": what failed tends to be said at both ends."""
    if len(line) <= max_chars:
        return line
    head = (max_chars - 3) * 2 // 3
    return line[:head] + "..." + line[head + 3 - max_chars :]


def log_tail(path: Path, n_lines: int = 5, max_chars: int = 600, max_line_chars: int = 160) -> str:
    """The last non-empty lines of a log file, joined into one line (for one-line errors): stack
    frames left out, each line shortened so that one huge line (an Erlang exit reason) cannot push
    out the lines before it."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    lines = [
        shortened(line, max_line_chars)
        for line in map(str.strip, text.splitlines())
        if line and not STACK_FRAME.match(line)
    ]
    if not lines:
        return f"(log {path} is empty)"
    tail = " | ".join(lines[-n_lines:])
    return tail if len(tail) <= max_chars else "..." + tail[-max_chars:]


def unverified_tls() -> ssl.SSLContext:
    """The servers under test present self-signed certificates."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def http_get(
    host: str, port: int, path: str, tls: bool = False, timeout_s: float = PROBE_TIMEOUT_S
) -> tuple[int, bytes] | None:
    """(status, body) of a GET to host:port/path, None when no HTTP response came; over TLS the
    server's self-signed certificate is not checked."""
    conn = (
        http.client.HTTPSConnection(host, port, timeout=timeout_s, context=unverified_tls())
        if tls
        else http.client.HTTPConnection(host, port, timeout=timeout_s)
    )
    try:
        conn.request("GET", path, headers={"Connection": "close"})
        response = conn.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


#: What the lab asks a server it started for, to learn that it answers (any status will do).
READY_PATH = "/__gauntlet/ready"


def answers_http(host: str, port: int, path: str, tls: bool = False, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """True when a GET to host:port/path gets any HTTP response (any status)."""
    return http_get(host, port, path, tls, timeout_s) is not None


#: What an HTTP/2 client sends first: the connection preface and an empty SETTINGS frame.
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
H2_FRAME_HEADER_BYTES = 9
H2_SETTINGS = 4


def answers_h2c(host: str, port: int, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """True when host:port answers the HTTP/2 preface with a SETTINGS frame (h2c, prior knowledge);
    no request is sent, so nothing is logged."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            return settings_answer_preface(sock)
    except OSError:
        return False


def settings_answer_preface(sock: socket.socket) -> bool:
    """Send the HTTP/2 preface on a connected socket: does a SETTINGS frame come back first?"""
    sock.sendall(H2_PREFACE)
    head = b""
    while len(head) < H2_FRAME_HEADER_BYTES:
        chunk = sock.recv(H2_FRAME_HEADER_BYTES - len(head))
        if not chunk:
            return False
        head += chunk
    return head[3] == H2_SETTINGS


def accepts_connections(address: str | tuple[str, int], timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """True when a unix socket path or a (host, port) accepts a connection."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(address)
            return True
        except OSError:
            return False


def wait_until(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    *,
    name: str,
    what: str,
    deadline_s: float,
    log_path: Path,
) -> None:
    """Poll `ready` until it is true; raise GauntletError with the log's tail if the process exits
    or the deadline passes first. `what` completes "did not ...": "answer HTTP on 127.0.0.1:80"."""
    deadline = time.monotonic() + deadline_s
    while True:
        status = proc.poll()
        if status is not None:
            raise GauntletError(
                f"{name} exited with status {status} before it could {what}; its log ends: {log_tail(log_path)}",
                "fix what the log says",
            )
        if ready():
            return
        if time.monotonic() >= deadline:
            raise GauntletError(
                f"{name} did not {what} within {deadline_s:g} s; its log ends: {log_tail(log_path)}",
                "check the log above; a slow machine may need a longer ready timeout",
            )
        time.sleep(PROBE_INTERVAL_S)


def wait_ready(
    proc: subprocess.Popen[bytes],
    *,
    name: str,
    host: str,
    port: int,
    path: str,
    deadline_s: float,
    log_path: Path,
    tls: bool = False,
    h2c: bool = False,
) -> None:
    """Probe until the server answers HTTP (any status), or with `h2c` the HTTP/2 preface."""
    wait_until(
        proc,
        (lambda: answers_h2c(host, port)) if h2c else (lambda: answers_http(host, port, path, tls)),
        name=name,
        what=f"answer HTTP on {host}:{port}",
        deadline_s=deadline_s,
        log_path=log_path,
    )


def wait_for_processes(
    proc: subprocess.Popen[bytes], processes: int, *, name: str, timeout_s: float, log_path: Path
) -> None:
    """Wait until `proc` and its descendants are `processes` (a master forks its workers after it
    starts listening); raise with the log's tail if they are not within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while len(processes_under(proc.pid)) < processes:
        if proc.poll() is not None or time.monotonic() >= deadline:
            raise GauntletError(
                f"{name} has {len(processes_under(proc.pid))} of its {processes} processes after {timeout_s:g} s; "
                f"its log ends: {log_tail(log_path)}",
                "fix what the log says (too many workers for this machine's limits?)",
            )
        time.sleep(0.01)


def processes_under(pid: int) -> list[psutil.Process]:
    """The process and all its descendants (empty if it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def stop_processes(
    proc: subprocess.Popen[bytes],
    *,
    known: Iterable[psutil.Process] = (),
    sig: int = signal.SIGTERM,
    grace_s: float = 5.0,
) -> None:
    """Send `sig` to the process, wait up to `grace_s`, then SIGKILL every process under it.

    Those are its descendants now plus `known` (processes seen earlier, e.g. at start): once a
    parent is gone its orphans are reparented and can no longer be found from it. psutil refuses to
    signal a pid that was reused, so a stale `known` entry is harmless.
    """
    deadline = time.monotonic() + grace_s
    others = {p.pid: p for p in known if p.is_running()}
    others.update((p.pid, p) for p in processes_under(proc.pid))
    others.pop(proc.pid, None)  # the Popen reaps its own child and keeps the exit status
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            kill_all(others.values())
            proc.kill()
            try:
                proc.wait(timeout=KILLED_EXIT_S)
            except subprocess.TimeoutExpired:
                raise GauntletError(
                    f"server pid {proc.pid} has not exited {KILLED_EXIT_S:g} s after SIGKILL",
                    f"see what holds it (cat /proc/{proc.pid}/stack), then kill it by hand",
                ) from None
    alive = wait_gone(others.values(), max(0.0, deadline - time.monotonic()))
    kill_all(alive)
    wait_gone(alive, KILLED_EXIT_S)


def kill_all(processes: Iterable[psutil.Process]) -> None:
    for process in processes:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass


def listening_pids(port: int) -> list[int | None]:
    """Pids (None when not ours to see) of TCP sockets listening on `port`, any address."""
    return [
        conn.pid
        for conn in psutil.net_connections(kind="tcp")
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port
    ]


def leftovers(pids: Iterable[int], port: int) -> list[str]:
    """What is still there after a stop: live processes among `pids`, listeners on `port`."""
    problems = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            if running(proc):
                problems.append(f"pid {pid} ({proc.name()}) is still running")
        except psutil.NoSuchProcess:
            pass
    problems += [f"port {port} is still listened on (pid {pid})" for pid in listening_pids(port)]
    return problems

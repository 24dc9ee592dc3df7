"""BeSim, the SPECweb-like applications' back-end simulator: the engine's built-in server with its
/besim/ calls (engine/src/server/besim.rs), run as a process of its own on a loopback port, started
before the web server and stopped after it, as MariaDB is for WordPress.

`python -m gauntlet.servers.apps.besim --port P --service-time-us T` serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import signal
import sys
import urllib.request
from typing import Any

from gauntlet import engine
from gauntlet.servers.base import BackendProcess
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import LOOPBACK, free_port, spawn, stop_processes, wait_ready

NAME = "besim"
#: The service time of a call when none is given: a fast back end, well below a page's own time.
DEFAULT_SERVICE_TIME_US = 1_000
#: Two threads: the machine's cores are the web server's to use; BeSim only waits and formats rows.
THREADS = 2
STATS_PATH = "/besim/stats"
#: prctl's PR_SET_NAME: the process's comm, by which the monitor gives it the `database` role.
PR_SET_NAME = 15


def start_besim(premises: Premises, service_time_us: int, timeout_s: float) -> BackendProcess:
    """Start BeSim on a free loopback port in the instance's cgroup; return once it answers."""
    port = free_port()
    argv = [sys.executable, "-m", __name__, "--port", str(port), "--service-time-us", str(service_time_us)]
    log_path = premises.workdir / "logs" / "besim.log"
    log_path.parent.mkdir(exist_ok=True)
    proc = spawn(argv, cwd=premises.workdir, log_path=log_path, premises=premises)
    try:
        wait_ready(proc, name=NAME, host=LOOPBACK, port=port, path=STATS_PATH, deadline_s=timeout_s, log_path=log_path)
    except BaseException:
        stop_processes(proc)
        raise
    return BackendProcess(NAME, proc, signal.SIGTERM, " ".join(argv), log_path, port)


def _get(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://{LOOPBACK}:{port}{path}", timeout=10) as answer:
        body: bytes = answer.read()
        return body


def besim_stats(port: int) -> dict[str, Any]:
    """{"calls": {"bank/login": N, ...}, "total": N, "failing": bool}: what BeSim has answered."""
    stats: dict[str, Any] = json.loads(_get(port, STATS_PATH))
    return stats


def set_failing(port: int, failing: bool) -> None:
    """Make every call answer 503 (the broken back end), or answer again."""
    _get(port, f"/besim/fail?on={int(failing)}")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="besim", description="The SPECweb-like applications' back-end simulator")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--service-time-us", type=int, default=DEFAULT_SERVICE_TIME_US)
    options = parser.parse_args(argv)
    ctypes.CDLL(None).prctl(PR_SET_NAME, NAME.encode(), 0, 0, 0)
    waited = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    server = engine.serve(LOOPBACK, options.port, THREADS, 0, 0, False, besim_service_time_us=options.service_time_us)
    print(f"besim: listening on http://{LOOPBACK}:{server.port}/ ({options.service_time_us} µs a call)", flush=True)
    signal.sigwait(waited)
    server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])

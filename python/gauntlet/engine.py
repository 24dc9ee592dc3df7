"""The only importer of the native module: plans in, results out, with progress and Ctrl-C."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gauntlet import _engine
from gauntlet.errors import GauntletError

PROGRESS_INTERVAL_S = 0.25

Plan = dict[str, Any]
Progress = dict[str, int | bool]


@dataclass
class RunOutcome:
    result: dict[str, Any]
    interrupted: bool


def run(plan: Plan, on_progress: Callable[[Progress], None] | None = None) -> RunOutcome:
    """Run a plan with the GIL released; Ctrl-C cancels it and returns what was measured."""
    try:
        handle = _engine.Run(json.dumps(plan))
        handle.start()
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None
    interrupted = False
    while True:
        try:
            result_json = handle.wait(PROGRESS_INTERVAL_S)
            if result_json is not None:
                return RunOutcome(json.loads(result_json), interrupted)
            if on_progress is not None and not interrupted:
                on_progress(handle.progress())
        except KeyboardInterrupt:
            handle.cancel()
            interrupted = True


def workload_files() -> dict[str, bytes]:
    """The standard workload, byte-exact: file name -> content."""
    return _engine.workload_files()


def self_signed_certificate() -> tuple[str, str]:
    """A fresh self-signed certificate for localhost and the loopback addresses: (cert, key) PEM."""
    return _engine.self_signed_certificate()


def serve(
    host: str,
    port: int,
    threads: int,
    stall_ms: int,
    stall_every_ms: int,
    tls: bool,
    *,
    tls_version: str | None = None,
    cipher: str | None = None,
) -> _engine.Server:
    """The built-in server in this process, listening when this returns. With `tls`, `tls_version`
    ("1.2" or "1.3") and `cipher` (an IANA or rustls suite name) pin what it accepts."""
    config = {
        "host": host, "port": port, "threads": threads, "stall_ms": stall_ms, "stall_every_ms": stall_every_ms, "tls": tls,
        "tls_version": tls_version, "cipher": cipher,
    }
    try:
        return _engine.Server(json.dumps(config))
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None

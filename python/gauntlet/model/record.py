"""What one measured case hands to the store: the grid point that made it, what ran, what came out.

The store keeps these as they are; the report and compare read them back. `params` is flat and
JSON-able, in the suite's words (server, workers, keepalive, protocol, path, connections,
rate_per_s, ...), and `key` is the same for the same grid point in every run, so two runs can be
compared case by case and a resumed run knows what is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


def case_key(params: dict[str, Any]) -> str:
    """The identity of a grid point: its parameters in a canonical order (repeats excluded)."""
    return json.dumps({k: v for k, v in sorted(params.items()) if k != "repeat"}, separators=(",", ":"))


@dataclass
class CaseRecord:
    params: dict[str, Any]
    #: 0-based: the n-th measurement of the same grid point.
    repeat: int = 0
    #: The server's version, the config Gauntlet rendered for it (None for an external URL).
    server_version: str | None = None
    config_text: str | None = None
    #: The run result (gauntlet.run-result/2), with "server" when the monitor ran; None on error.
    result: dict[str, Any] | None = None
    #: Why the case failed: the server did not start, the combination is unsupported, ... (no
    #: result then); or, with the result measured until then, a server process exited or no
    #: request ended (docs/results.md).
    error: str | None = None
    #: What bounded the result (client-bound, server-cpu-bound, ...); empty when nothing was saturated.
    labels: list[str] = field(default_factory=list)
    started_unix_ms: int = 0
    ended_unix_ms: int = 0

    @property
    def key(self) -> str:
        return case_key(self.params)

    @property
    def breaches(self) -> list[str]:
        """The invariants the result broke (gauntlet.analysis.invariants); empty without a result."""
        if self.result is None or "invariants" not in self.result:
            return []
        return list(self.result["invariants"]["breaches"])

    @property
    def status(self) -> str:
        """ok, partial (cut short by Ctrl-C), or error."""
        if self.result is None or self.error is not None:
            return "error"
        return "partial" if self.result.get("partial") else "ok"

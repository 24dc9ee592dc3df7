"""`--out jsonl:FILE`: a command's cases as JSON lines, one per case start, one per second of each
case, one per case end, each appended and flushed the moment it is known, so that `tail -f FILE`
follows the run (the format: docs/watching.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, Self

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.lab.observers import Case
from gauntlet.model.record import CaseRecord

JSONL_SCHEMA = "gauntlet.watch-line/1"
#: The result's figures a case's end line repeats (the whole result is in the store).
END_FIGURES = (
    "partial", "elapsed_us", "requests", "responses", "errors_total", "errors", "status_codes", "bytes_in",
    "requests_per_s", "latency_us",
)


class JsonLines:
    """An observer (lab.observers.Observer) that writes each event as a line of FILE."""

    def __init__(self, file: IO[str], path: Path) -> None:
        self._file = file
        self._path = path

    @classmethod
    def open(cls, target: str) -> Self:
        """FILE opened for appending (a run appends to what earlier runs wrote); refused in one line."""
        path = Path(target)
        try:
            return cls(path.open("a", encoding="utf-8"), path)
        except OSError as err:
            raise GauntletError(
                f"--out jsonl:{target}: cannot write {str(path)!r} ({err.strerror})",
                "Give a file in a writable directory",
            ) from None

    def case_started(self, case: Case) -> None:
        self._write("case_start", case, {
            "params": case.params, "index": case.index, "planned": case.planned, "server": case.server_kind,
            "server_version": case.server_version,
        })

    def second(self, case: Case, second: engine.Second) -> None:
        self._write("second", case, second)

    def server_sample(self, case: Case, point: dict[str, Any]) -> None:
        """Not written: the lines carry the engine's seconds (the samples are in the stored result)."""

    def case_ended(self, case: Case, record: CaseRecord) -> None:
        result = record.result or {}
        figures = {name: result[name] for name in END_FIGURES if name in result}
        self._write("case_end", case, {
            "status": record.status, "error": record.error, "labels": record.labels, "ended_unix_ms": record.ended_unix_ms,
            "result": figures or None,
        })

    def close(self) -> None:
        self._file.close()

    def _write(self, event: str, case: Case, fields: dict[str, Any]) -> None:
        line = {
            "schema": JSONL_SCHEMA, "event": event, "command": case.command, "run_id": case.run_id, "case": case.key,
            "repeat": case.repeat, "started_unix_ms": case.started_unix_ms,
        } | fields
        try:
            self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
            self._file.flush()
        except OSError as err:
            raise GauntletError(
                f"--out jsonl: cannot write {str(self._path)!r} ({err.strerror})", "Free space or give another file"
            ) from None

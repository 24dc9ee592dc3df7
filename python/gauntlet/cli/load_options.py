"""The load options of `run` and `sweep` as the command line gives them, and the engine plan they
make (gauntlet.plan.Plan). An option left out stays None in the plan: the engine's default applies."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gauntlet.errors import GauntletError
from gauntlet.plan import DEFAULT_CONNECTIONS, DEFAULT_THREADS, IdlePlan, Plan, TlsSettings


def parse_header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise GauntletError(f"the header {text!r} has no 'Name: value' form", "Write it as -H 'Name: value'")
    return name.strip(), value.strip()


def http2_fields(http2: bool, streams: int | None, http10: bool = False) -> dict[str, Any]:
    """The plan's HTTP/2 fields for --http2 and --streams (empty for HTTP/1.x)."""
    if streams is not None and not http2:
        raise GauntletError("--streams is the number of HTTP/2 streams per connection", "Add --http2, or leave --streams out")
    if http2 and http10:
        raise GauntletError("--http2 and --http1.0 ask for two protocols", "Give one of them")
    if not http2:
        return {}
    return {"http_version": "2", "streams_per_connection": streams}


def sessions_http2_fields(http2: bool, streams: int | None) -> dict[str, Any]:
    """The plan's HTTP/2 fields for a load file's sessions, which take no --streams: each user's
    page and images go as two streams of its one connection per target, as a browser's do."""
    http2_fields(http2, streams)  # refuses --streams without --http2
    if streams is not None:
        raise GauntletError(
            "--streams does not apply to a load file's sessions: over HTTP/2 each user's page and images are 2 streams of one connection",
            "Leave --streams out",
        )
    return {"http_version": "2"} if http2 else {}


def read_body(path: Path) -> str:
    try:
        return base64.b64encode(path.read_bytes()).decode()
    except OSError as err:
        raise GauntletError(f"cannot read the body file {str(path)!r} ({err.strerror})", "Check the path") from None


@dataclass(frozen=True)
class LoadOptions:
    """The options as the bounds table read them: counts as ints, durations in µs."""

    connections: int = DEFAULT_CONNECTIONS
    threads: int = DEFAULT_THREADS
    requests: int | None = None
    duration_us: int | None = None
    rate_per_s: float | None = None
    no_keepalive: bool = False
    calls_per_connection: int | None = None
    http10: bool = False
    http2: bool = False
    streams: int | None = None
    tls_version: str | None = None
    cipher: str | None = None
    no_tls_resumption: bool = False
    timeout_us: int | None = None
    warmup_us: int | None = None
    method: str = "GET"
    headers: list[str] = field(default_factory=list)
    body: Path | None = None
    allow_remote: bool = False
    source_addresses: str | None = None
    idle: int | None = None
    idle_send_interval_us: int | None = None
    io: Literal["epoll", "uring"] | None = None
    io_batch_us: int | None = None
    scheduling: Literal["batch", "normal"] | None = None

    def idle_plan(self) -> IdlePlan | None:
        """--idle 0 is none, as a suite's `idle: 0`."""
        if not self.idle:
            if self.idle_send_interval_us is not None:
                raise GauntletError("--idle-send-interval is for idle connections", "Give --idle N as well")
            return None
        return IdlePlan(connections=self.idle, send_interval_us=self.idle_send_interval_us)

    def tls(self) -> TlsSettings | None:
        """TLS settings for an https URL; None leaves the engine's defaults (resumption on)."""
        if self.tls_version is None and self.cipher is None and not self.no_tls_resumption:
            return None
        if self.no_tls_resumption:
            return TlsSettings(version=self.tls_version, cipher=self.cipher, resumption=False)
        return TlsSettings(version=self.tls_version, cipher=self.cipher)

    def plan(self, url: str) -> Plan:
        return Plan(
            url=url,
            connections=self.connections,
            threads=self.threads,
            requests=self.requests,
            duration_us=self.duration_us,
            rate_per_s=self.rate_per_s,
            keepalive=False if self.no_keepalive else None,
            calls_per_connection=self.calls_per_connection,
            http_version="1.0" if self.http10 else None,
            tls=self.tls(),
            timeout_us=self.timeout_us,
            warmup_us=self.warmup_us,
            method=self.method.upper(),
            headers=[parse_header(h) for h in self.headers] or None,
            body_base64=read_body(self.body) if self.body else None,
            allow_remote=self.allow_remote or None,
            source_addresses=[a.strip() for a in self.source_addresses.split(",")] if self.source_addresses else None,
            idle=self.idle_plan(),
            io=self.io,
            io_batch_us=self.io_batch_us,
            scheduling=self.scheduling,
        ).model_copy(update=http2_fields(self.http2, self.streams, self.http10))

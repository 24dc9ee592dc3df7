"""The options of `run` and `sweep` that say how each case is measured (lab.measure.Settings):
repeats, restarts between them, a warm-up by request count, the declared link, the error share."""

from __future__ import annotations

from typing import Annotated

import typer

from gauntlet.lab.measure import Settings
from gauntlet.units import parse_count, parse_link_bits_per_s

Repeat = Annotated[int, typer.Option("--repeat", min=1, help="Measure N times: median, min..max, variation")]
RestartBetween = Annotated[
    bool, typer.Option("--restart-between", help="Restart the server Gauntlet started between repeats")
]
WarmupRequests = Annotated[
    str | None, typer.Option("--warmup-requests", help="First run N requests, uncounted (again after a restart)")
]
Link = Annotated[
    str | None, typer.Option("--link", help="The link's speed (1gbit, 100mbit): flag results near its ceiling")
]
ErrorShare = Annotated[
    float, typer.Option("--error-share", min=0.0, max=1.0, help="Flag error-bound above this failed share (0.01 = 1%)")
]

FailOn = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when a repeat crosses this: errors>5%, p99>50ms, rate-not-held (repeatable; default errors>5%; none)",
    ),
]


def settings(
    repeat: int, restart_between: bool, warmup_requests: str | None, link: str | None, error_share: float
) -> Settings:
    return Settings(
        repeats=repeat,
        restart_between=restart_between,
        warmup_requests=parse_count(warmup_requests, "--warmup-requests") if warmup_requests else None,
        link_bits_per_s=parse_link_bits_per_s(link, "--link") if link else None,
        error_share_limit=error_share,
    )


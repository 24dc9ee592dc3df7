"""The options of `run` and `sweep` that say how each case is measured (lab.measure.Settings):
repeats, restarts between them, a warm-up by request count, the declared link, the error share."""

from __future__ import annotations

from typing import Annotated

import typer

from gauntlet.bounds import LINK, REPEATS, REQUESTS, SHARE
from gauntlet.cli.options import bounded
from gauntlet.lab.measure import Settings

Repeat = Annotated[int, bounded(REPEATS, "--repeat", help="Measure N times: median, min..max, variation")]
RestartBetween = Annotated[
    bool, typer.Option("--restart-between", help="Restart the server Gauntlet started between repeats")
]
WarmupRequests = Annotated[
    int | None, bounded(REQUESTS, "--warmup-requests", help="First run N requests, uncounted (again after a restart)")
]
Link = Annotated[
    float | None, bounded(LINK, "--link", help="The link's speed (1gbit, 100mbit): flag results near its ceiling")
]
ErrorShare = Annotated[
    float, bounded(SHARE, "--error-share", help="Flag error-bound above this failed share (0.01 = 1%)")
]

FailOn = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when a repeat crosses this: errors>5%, p99>50ms, rate-not-held (repeatable; default errors>5%; none)",
    ),
]


def settings(
    repeat: int, restart_between: bool, warmup_requests: int | None, link_bits_per_s: float | None, error_share: float
) -> Settings:
    return Settings(
        repeats=repeat,
        restart_between=restart_between,
        warmup_requests=warmup_requests,
        link_bits_per_s=link_bits_per_s,
        error_share_limit=error_share,
    )


"""The options of `run` and `sweep` that say how each case is measured (lab.measure.Settings):
repeats, restarts between them, a warm-up by request count, the declared link, the error share;
and where: on agents, into which store (`Measuring`, declared once for both commands)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from gauntlet.analysis.bottleneck import DEFAULT_ERROR_SHARE
from gauntlet.analysis.thresholds import Threshold, crossings
from gauntlet.bounds import LINK, REPEATS, REQUESTS, SHARE
from gauntlet.cli.agent_options import Agents, Scheduler
from gauntlet.cli.options import DEFAULT_DB_PATH, DbOption, NoStoreOption, bounded, store_path
from gauntlet.lab.measure import Settings
from gauntlet.report.output import console

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

#: sweep, capacity and suite: thresholds only when given (their loads are meant to reach failure).
FailOnGiven = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when a measured case crosses this: errors>5%, p99>50ms, rate-not-held (repeatable; none by default)",
    ),
]
EXIT_THRESHOLD_CROSSED = 1


def fail_on(thresholds: list[Threshold], results: list[dict[str, Any]], labels: list[str] | None = None) -> int:
    """Say on stderr which threshold each result crossed; EXIT_THRESHOLD_CROSSED when one did, else 0."""
    crossed = crossings(thresholds, results, labels)
    err = console(stderr=True)
    for why in crossed:
        err.print(Text(f"gauntlet: failed --fail-on {why}"), soft_wrap=True)
    return EXIT_THRESHOLD_CROSSED if crossed else 0


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



@dataclass(frozen=True)
class Measuring:
    """How and where `run` and `sweep` measure each case (`options.with_options` makes each field an option)."""

    repeat: Repeat = 1
    restart_between: RestartBetween = False
    warmup_requests: WarmupRequests = None
    link: Link = None
    error_share: ErrorShare = DEFAULT_ERROR_SHARE
    agents: Agents = None
    scheduler: Scheduler = None
    db: DbOption = DEFAULT_DB_PATH
    no_store: NoStoreOption = False

    def settings(self) -> Settings:
        return settings(self.repeat, self.restart_between, self.warmup_requests, self.link, self.error_share)

    def store(self) -> Path | None:
        """Where the run is stored: --db, or nowhere with --no-store."""
        return store_path(self.db, self.no_store)

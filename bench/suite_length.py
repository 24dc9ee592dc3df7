"""How long a suite's default (or full) variant would take on this machine, from a stored run of a
shorter variant: each case's requests at the rate its nearest measured case held (same server,
group, page, keep-alive, protocol and backend; the nearest connection count), or its duration,
plus its warm-up and the run's own time between cases (server starts, settling), times the
suite's repeats. Capacity searches and cases no measured case matches are left out, and said so:
the estimate is a lower bound.

    .venv/bin/gauntlet suite run thesis --quick --db q.db
    .venv/bin/python bench/suite_length.py thesis q.db RUN [--full]

Prints the estimate per group and in total, and the cases no measured case matches. Reads the
store only; runs no load. docs/findings/README.md quotes it for the studies too long to run.
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from gauntlet.errors import GauntletError
from gauntlet.store import Store
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite
from gauntlet.units import format_duration_us

#: Params that size a case's load rather than say what it measures: a case of another variant
#: matches when every other param agrees.
LOAD_SIZE = ("connections", "duration_s", "requests", "warmup_s", "timeout_s", "rate_per_s")


def _identity(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, repr(value)) for name, value in params.items() if name not in LOAD_SIZE))


def _nearest_rate(measured: list[tuple[int, float]], connections: int) -> float | None:
    """The requests/s of the measured case whose connection count is nearest (by ratio)."""
    if not measured:
        return None
    return min(measured, key=lambda found: abs(math.log(found[0] / connections)))[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("store", type=Path)
    parser.add_argument("run", type=int)
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args()
    try:
        with Store.open_read_only(args.store) as store:
            run = store.run(args.run)
            cases = store.cases([args.run])
    except GauntletError as err:
        parser.error(str(err))
    rates: dict[tuple[tuple[str, str], ...], list[tuple[int, float]]] = defaultdict(list)
    measured_s = 0.0
    for case in cases:
        if case.result is None:
            continue
        measured_s += case.result["elapsed_us"] / 1e6 + case.params.get("warmup_s", 0.0)
        if case.figures.get("requests_per_s"):
            rates[_identity(case.params)].append((case.params.get("connections", 1), case.figures["requests_per_s"]))
    wall_s = ((run.ended_unix_ms or run.started_unix_ms) - run.started_unix_ms) / 1e3
    between_s = max(0.0, wall_s - measured_s) / max(len(cases), 1)
    loaded = load_suite(args.suite, full=args.full)
    kinds = sorted({case.params["server"] for case in cases if "server" in case.params})
    by_group: dict[str, float] = defaultdict(float)
    unmatched: dict[str, int] = defaultdict(int)
    for block in expand(loaded.suite, kinds, loaded.path.parent):
        for case in block.cases:
            plan = case.plan
            if plan is None:
                unmatched[case.group] += 1
                continue
            load_s = (plan.duration_us or 0) / 1e6
            if plan.requests:
                rate = _nearest_rate(rates.get(_identity(case.params), []), plan.connections)
                if rate is None:
                    unmatched[case.group] += 1
                    continue
                load_s = plan.requests / rate
            by_group[case.group] += (load_s + (plan.warmup_us or 0) / 1e6 + between_s) * loaded.suite.repeats
    total_s = sum(by_group.values())
    print(f"{args.suite} ({'full' if args.full else 'default'}) from run {args.run} of {len(cases)} cases "
          f"({between_s:.1f} s between cases):")
    for group, seconds in by_group.items():
        print(f"  {group:<16} {format_duration_us(seconds * 1e6):>10}")
    print(f"  {'total':<16} {format_duration_us(total_s * 1e6):>10}")
    for group, count in unmatched.items():
        print(f"  {group}: {count} cases with no measured case to go by (not counted)")


if __name__ == "__main__":
    main()

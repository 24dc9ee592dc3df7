"""How far identical runs drift apart: the 99 % band of A/A pairs per headline figure, from stores
whose runs are consecutive identical pairs (runs 1 and 2, 3 and 4, ...), as `compare` pairs them.

    for i in $(seq 20); do .venv/bin/gauntlet run -c 10 -d 2s --db /tmp/aa.db; done
    .venv/bin/python bench/noise_bands.py /tmp/aa.db [more.db ...]

Per figure: d = log(new / old) per pair (old, new: each run's median over its repeats), and the
band exp(2.576 x rms(d)) - 1, which 99 % of identical pairs stay within when d is normal around 0.
analysis.verdict.DEFAULT_NOISE_FLOORS are the widest bands of docs/metrics.md's three sets.
Reads the stores only; runs no load.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from gauntlet.analysis.verdict import Z_99
from gauntlet.report.compare import compare
from gauntlet.store import Store


def log_ratios(db: Path) -> dict[str, list[float]]:
    with Store.open_read_only(db) as store:
        runs = sorted(run.run_id for run in store.runs())
        cases = {run: store.cases([run]) for run in runs}
    found: dict[str, list[float]] = {}
    for old, new in zip(runs[0::2], runs[1::2], strict=False):
        for case in compare(cases[old], cases[new], {}, {}).cases:
            for change in case.changes:
                if change.verdict is not None and not change.verdict.share:
                    found.setdefault(change.figure, []).append(math.log1p(change.verdict.change.point))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path)
    for db in parser.parse_args().stores:
        print(db)
        for figure, logs in log_ratios(db).items():
            rms = math.sqrt(sum(d * d for d in logs) / len(logs))
            print(f"  {figure:28} {len(logs):3} pairs  median |change| {math.expm1(sorted(map(abs, logs))[len(logs) // 2]):6.0%}"
                  f"  99 % band {math.expm1(Z_99 * rms):6.0%}")


if __name__ == "__main__":
    main()

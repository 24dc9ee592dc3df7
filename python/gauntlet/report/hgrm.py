"""`gauntlet export RUN --hgrm DIR`: each case's stored latency histogram as an `.hgrm` file, the
percentile distribution text HdrHistogram writes (`outputPercentileDistribution`) and wrk2 prints
with `--latency`, in milliseconds, readable by the HdrHistogram plotter
(https://hdrhistogram.github.io/HdrHistogram/plotFiles.html). Every figure is the engine's, read
from the stored histogram (engine.histogram_distribution); docs/watching.md shows a file."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.report.output import write_atomically

#: Percentile levels per halving of the distance to 100 %, as wrk2 and HdrHistogram's default.
TICKS_PER_HALF_DISTANCE = 5
#: Values are printed in ms, as wrk2 prints them (the histogram holds µs).
US_PER_OUTPUT_UNIT = 1000.0
#: A file name's longest stem before it is cut and given its key's hash.
MAX_STEM_CHARS = 150


def percentile_distribution(encoded: str) -> str:
    """The `.hgrm` text of an encoded histogram: HdrHistogram's classic (C, wrk2) layout, values
    at the histogram's significant digits, the last (100 %) line's 1/(1-Percentile) `inf`."""
    found = engine.histogram_distribution(encoded, TICKS_PER_HALF_DISTANCE)
    digits = int(found["significant_digits"])
    lines = ["%12s %12s %12s %12s\n\n" % ("Value", "Percentile", "TotalCount", "1/(1-Percentile)")]
    for value_us, level, below in found["steps"]:
        inverse = 1 / (1 - level) if level < 1 else float("inf")
        lines.append(f"{value_us / US_PER_OUTPUT_UNIT:12.{digits}f} {level:12f} {below:12d} {inverse:12.2f}\n")
    scale = US_PER_OUTPUT_UNIT
    lines.append(f"#[Mean    = {found['mean_us'] / scale:12.3f}, StdDeviation   = {found['stdev_us'] / scale:12.3f}]\n")
    lines.append(f"#[Max     = {found['max_us'] / scale:12.3f}, Total count    = {found['count']:12d}]\n")
    lines.append(f"#[Buckets = {found['buckets']:12d}, SubBuckets     = {found['sub_buckets']:12d}]\n")
    return "".join(lines)


def file_name(params: dict[str, Any], repeat: int) -> str:
    """A case's file, named by its params in key order (model.record.case_key) and its repeat:
    `connections-10_group-run_..._r0.hgrm`; a long one is cut and ends in its key's hash."""
    parts = [f"{name}-{value}" for name, value in sorted(params.items()) if name != "repeat" and value is not None]
    stem = re.sub(r"[^A-Za-z0-9.,=+-]+", "_", "_".join(parts)).strip("_.") or "case"
    if len(stem) > MAX_STEM_CHARS:
        stem = stem[:MAX_STEM_CHARS] + "-" + hashlib.sha256(stem.encode()).hexdigest()[:12]
    return f"{stem}_r{repeat}.hgrm"


def write_distributions(directory: Path, cases: list[tuple[dict[str, Any], int, str]]) -> list[Path]:
    """One file per (params, repeat, encoded histogram) in `directory` (created if missing)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise GauntletError(
            f"--hgrm {str(directory)!r}: cannot create the directory ({err.strerror})", "Give a directory you can write to"
        ) from None
    written = []
    for params, repeat, encoded in cases:
        path = directory / file_name(params, repeat)
        write_atomically(path, percentile_distribution(encoded))
        written.append(path)
    return written

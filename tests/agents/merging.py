"""Helpers shared by the agents' tests: an independent merge of encoded histograms (the pure-Python
HdrHistogram, not the engine), and the schema a merged result must meet."""

from __future__ import annotations


import jsonschema
from hdrh.histogram import HdrHistogram

from gauntlet import schema

SCHEMA = schema.run_result()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def recorded(encoded: str) -> list[tuple[int, int]]:
    """(value, count) of every recorded bucket of an encoded histogram."""
    histogram = HdrHistogram.decode(encoded)
    return [(item.value_iterated_to, item.count_at_value_iterated_to) for item in histogram.get_recorded_iterator()]


def merged_independently(encoded: list[str], significant_digits: int = 3) -> list[tuple[int, int]]:
    merged = HdrHistogram(1, 3_600_000_000, significant_digits)
    for part in encoded:
        merged.add(HdrHistogram.decode(part))
    return [(item.value_iterated_to, item.count_at_value_iterated_to) for item in merged.get_recorded_iterator()]

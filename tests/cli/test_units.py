from __future__ import annotations

import pytest

from gauntlet.errors import GauntletError
from gauntlet.units import count_of, format_bytes, format_duration_us, parse_duration_us


@pytest.mark.parametrize(
    ("text", "duration_us"),
    [("500ms", 500_000), ("2s", 2_000_000), ("2", 2_000_000), ("1.5m", 90_000_000), ("1h", 3_600_000_000), ("250us", 250), ("250µs", 250)],
)
def test_durations(text: str, duration_us: int) -> None:
    assert parse_duration_us(text, "-d") == duration_us


@pytest.mark.parametrize("text", ["", "s", "5x", "-1s", "0s", "1.2.3s"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(GauntletError, match="-d"):
        parse_duration_us(text, "-d")


@pytest.mark.parametrize(
    ("text", "count"), [("100000", 100_000), ("100,000", 100_000), ("10k", 10_000), ("1m", 1_000_000), ("1.5k", 1_500), ("-5", -5)]
)
def test_counts(text: str, count: int) -> None:
    assert count_of(text) == count


@pytest.mark.parametrize("text", ["", "ten", "10q", "1e3"])
def test_bad_counts(text: str) -> None:
    with pytest.raises(ValueError, match="is not a count"):
        count_of(text)


@pytest.mark.parametrize(
    ("n_bytes", "shown"), [(168, "168 B"), (83_572, "83.6 kB"), (28_460_000, "28.5 MB"), (2_000_000_000_000_000, "2000.0 TB")]
)
def test_bytes(n_bytes: int, shown: str) -> None:
    assert format_bytes(n_bytes) == shown


@pytest.mark.parametrize(("duration_us", "shown"), [(850, "850µs"), (12_300, "12.30ms"), (4_560_000, "4.56s"), (150_000_000, "2m30s")])
def test_duration_display(duration_us: int, shown: str) -> None:
    assert format_duration_us(duration_us) == shown

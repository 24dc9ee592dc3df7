"""Parse and format the units users type and read: "2s", "10k", "83,572 B"."""

from __future__ import annotations

import re

from gauntlet.errors import GauntletError

DURATION_UNITS_US = {"us": 1, "µs": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000}
BYTE_UNITS = ("B", "kB", "MB", "GB", "TB")
COUNT_SUFFIXES = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000}
LINK_PREFIXES = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_LINK = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:bit(?:/s)?|bps)\s*$", re.IGNORECASE)
#: A negative number is read too, so that a bound refuses it by its range rather than its form.
_NUMBER_UNIT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([a-zA-Zµ]*)\s*$")


def duration_us_of(text: str, bare_seconds: bool = True) -> int:
    """'500ms', '2s', '1.5m', '1h' (or, with `bare_seconds`, a plain number of seconds) in
    microseconds, rounded; ValueError saying how to write it otherwise."""
    match = _NUMBER_UNIT.match(text)
    unit = match[2].lower() if match else ""
    if match is None or (unit and unit not in DURATION_UNITS_US) or (not unit and not bare_seconds):
        raise ValueError(f"{text!r} is not a duration: write it as a number with a unit, 500ms, 10s, 2m or 1h")
    return round(float(match[1]) * DURATION_UNITS_US[unit or "s"])


def parse_duration_us(text: str, option: str) -> int:
    """'500ms', '2s', '1.5m', '1h', or a plain number of seconds, in microseconds (> 0)."""
    try:
        duration_us = duration_us_of(text)
    except ValueError:
        raise GauntletError(
            f"{option} {text!r} is not a duration",
            "Write it as a number with a unit: 500ms, 10s, 2m, 1h (a bare number is seconds)",
        ) from None
    if duration_us <= 0:
        raise GauntletError(f"{option} {text!r} is zero", "Give a positive duration")
    return duration_us


def count_of(text: str) -> float:
    """'100000', '100,000', '10k' or '1m' (million) as a number (whole or not: the caller decides);
    ValueError saying how to write it otherwise."""
    match = _NUMBER_UNIT.match(text.replace(",", "").replace("_", ""))
    suffix = match[2].lower() if match else ""
    if match is None or suffix not in COUNT_SUFFIXES:
        raise ValueError(f"{text!r} is not a count: write it as 100000, 100k or 1m")
    return float(match[1]) * COUNT_SUFFIXES[suffix] if "." in match[1] else int(match[1]) * COUNT_SUFFIXES[suffix]


def link_bits_per_s_of(text: str) -> float:
    """A link speed as network people write it: '1gbit', '940Mbit/s', '10mbps', in bits/s;
    ValueError saying how to write it otherwise."""
    match = _LINK.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a link speed: write it as bits per second, 10mbit, 940mbit or 1gbit")
    return float(match[1]) * LINK_PREFIXES[match[2].lower()]


def format_duration_us(duration_us: float) -> str:
    """A readable form: 850µs, 12.30ms, 4.56s, 2m30s (µs as the report's headers write it)."""
    if duration_us < 1_000:
        return f"{duration_us:.0f}µs"
    if duration_us < 1_000_000:
        return f"{duration_us / 1_000:.2f}ms"
    if duration_us < 60_000_000:
        return f"{duration_us / 1_000_000:.2f}s"
    minutes, seconds = divmod(duration_us / 1_000_000, 60)
    return f"{minutes:.0f}m{seconds:02.0f}s"


def format_bytes(n_bytes: float) -> str:
    """Decimal units, as network figures are: 168 B, 83.6 kB, 28.5 MB."""
    exponent = 0
    while abs(n_bytes) >= 1_000 and exponent < len(BYTE_UNITS) - 1:
        n_bytes /= 1_000
        exponent += 1
    return f"{n_bytes:,.0f} B" if exponent == 0 else f"{n_bytes:.1f} {BYTE_UNITS[exponent]}"


def format_count(count: float) -> str:
    return f"{count:,.0f}"

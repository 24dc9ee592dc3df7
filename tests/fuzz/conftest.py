"""Hypothesis profiles for the fuzz tests: `ci` (the default) is short and the same every run;
`GAUNTLET_FUZZ=long` draws GAUNTLET_FUZZ_EXAMPLES examples (100,000 unless told) with fresh
randomness (docs/fuzzing.md)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

QUIET = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=300, derandomize=True, **QUIET)
settings.register_profile("long", max_examples=int(os.environ.get("GAUNTLET_FUZZ_EXAMPLES", 100_000)), **QUIET)
settings.load_profile(os.environ.get("GAUNTLET_FUZZ", "ci"))

"""Sweeps: one measurement per concurrency level or per offered rate, each a fresh engine run.

Each step is a case measured by `lab.measure.measure_repeats` (warm-up, repeats, labels). A level the
engine refuses (too many connections for the open-files limit, say) is kept in the result with
its reason, and the sweep goes on; Ctrl-C ends the sweep after the step it cut short, which is
kept and marked partial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gauntlet import engine
from gauntlet.bounds import CONNECTIONS, RANGE_VALUES_MAX
from gauntlet.errors import GauntletError
from gauntlet.lab.measure import Repeats, Settings, Target, measure_repeats
from gauntlet.plan import Plan

SWEEP_SCHEMA = "gauntlet.sweep-result/1"


@dataclass
class Step:
    value: float
    repeats: Repeats | None = None
    refused: str | None = None

    @property
    def result(self) -> dict[str, Any] | None:
        """The median repeat's result (the only one without --repeat)."""
        return self.repeats.median().result if self.repeats is not None else None

    def to_json(self, key: str) -> dict[str, Any]:
        found = {key: self.value, "result": self.result, "refused": self.refused}
        if self.repeats is not None and len(self.repeats.measurements) > 1:
            measured = self.repeats.to_json()
            found |= {"repeats": measured["repeats"], "estimates": measured["estimates"]}
        return found


@dataclass
class Sweep:
    kind: str
    steps: list[Step] = field(default_factory=list)
    interrupted: bool = False

    def to_json(self) -> dict[str, Any]:
        key = "level" if self.kind == "concurrency" else "rate_per_s"
        return {
            "schema": SWEEP_SCHEMA,
            "kind": self.kind,
            "interrupted": self.interrupted,
            "steps": [step.to_json(key) for step in self.steps],
        }


def run_sweep(
    kind: str,
    plans: Iterable[tuple[float, Plan]],
    target: Target,
    settings: Settings,
    on_step: Callable[[Sweep], None],
    on_progress: Callable[[engine.Progress], None] | None = None,
    runner: engine.Runner = engine.run,
) -> Sweep:
    """Measure each (value, plan) in turn on `target` with `runner`; `on_step` sees the sweep after every step."""
    sweep = Sweep(kind)
    for value, plan in plans:
        try:
            repeats = measure_repeats(plan, target, settings, on_progress, run_plan=runner)
        except GauntletError as err:
            sweep.steps.append(Step(value, refused=str(err)))
        else:
            if repeats.measurements:
                sweep.steps.append(Step(value, repeats=repeats))
            sweep.interrupted = repeats.interrupted
        on_step(sweep)
        if sweep.interrupted:
            break
    return sweep


def concurrency_levels(text: str) -> list[int]:
    """'1,10,100' or '200..4000:200' (from..to:step) as a list of connection counts, each within
    the connections bound, at most RANGE_VALUES_MAX of them."""
    levels: Sequence[int]
    try:
        if ".." in text:
            span, _, step = text.partition(":")
            low, _, high = span.partition("..")
            levels = range(int(low), int(high) + 1, int(step or 1))
        else:
            levels = [int(part) for part in text.split(",")]
    except ValueError:
        levels = range(0)
    if not levels:
        raise GauntletError(
            f"--levels {text!r} is not a list of connection counts",
            "Write it as 1,10,100,250 or as 200..4000:200 (from..to:step)",
        )
    _range_length(len(levels), "--levels")
    for level in (min(levels), max(levels)):
        try:
            CONNECTIONS.check(level, level)
        except ValueError as err:
            raise GauntletError(f"--levels {text!r}: a level {err}", f"Give levels {CONNECTIONS.range_text()}") from None
    return list(levels)


def _range_length(count: int, options: str) -> None:
    if count > RANGE_VALUES_MAX:
        raise GauntletError(f"{options} make {count:,} steps", f"Give at most {RANGE_VALUES_MAX:,} steps (a larger step)")


def offered_rates(low_per_s: float, high_per_s: float, step_per_s: float) -> list[float]:
    if step_per_s <= 0 or low_per_s <= 0 or high_per_s < low_per_s:
        raise GauntletError(
            f"the rates --from {low_per_s:g} --to {high_per_s:g} --step {step_per_s:g} make no sweep",
            "Give 0 < --from <= --to and a positive --step",
        )
    count = int((high_per_s - low_per_s) / step_per_s + 1e-9) + 1
    _range_length(count, "--from, --to and --step")
    return [low_per_s + i * step_per_s for i in range(count)]

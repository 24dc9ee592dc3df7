"""A study's findings as a table: each claim, the paper's figure and where it says so, what this
run measured, and the verdict (gauntlet.analysis.findings)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from gauntlet.analysis.findings import Judged, judge
from gauntlet.analysis.verdict import NOT_MEASURED, NoiseFloor, default_floor
from gauntlet.errors import GauntletError
from gauntlet.lab.suite import search_key, searches_not_ended
from gauntlet.report.tables import markdown_table
from gauntlet.report.views import Column, Table
from gauntlet.store import CaseRow, RunRow
from gauntlet.suite.load import run_claims
from gauntlet.units import format_duration_us


def judged_run(
    run: RunRow, cases: Sequence[CaseRow], floors: dict[str, NoiseFloor], done: dict[tuple[str, int], bool | None]
) -> tuple[list[Judged], str]:
    """A suite run's claims judged on its cases (the machine's measured noise floors where stored),
    and where the claims came from; GauntletError when its suite states none. `done`: the run's
    cases a resume would not measure again (Store.done)."""
    claims, origin = run_claims(run.suite, run.suite_text)
    mine = [case for case in cases if case.run_id == run.run_id]
    unfinished = _unfinished_probes(run, mine, done)
    return judge(claims, mine, lambda figure: floors.get(figure) or default_floor(figure), unfinished), origin


def _unfinished_probes(run: RunRow, cases: list[CaseRow], done: dict[tuple[str, int], bool | None]) -> list[CaseRow]:
    """The probes of the run's capacity searches that had not ended when it stopped."""
    if run.status == "complete" or run.suite_text is None:
        return []
    not_ended = searches_not_ended(run.suite_text, run.options, done)
    return [case for case in cases if (search_key(case.params), case.repeat) in not_ended]


def study_findings(
    runs: Sequence[RunRow], cases: Sequence[CaseRow], floors: dict[str, NoiseFloor],
    done: Callable[[int], dict[tuple[str, int], bool | None]],
) -> list[Table]:
    """The findings table of every suite run whose study states claims (the report opens with them)."""
    found = []
    for run in runs:
        if run.command != "suite":
            continue
        try:
            judged, origin = judged_run(run, cases, floors, done(run.run_id))
        except GauntletError:
            continue
        table = findings_table(judged, origin)
        found.append(Table(f"findings-{run.run_id}", f"Findings: run {run.run_id}, {run.suite} ({tally(judged)})", table.note,
                           table.columns, table.rows))
    return found


def findings_table(judged: list[Judged], origin: str) -> Table:
    rows = [
        [
            item.claim.id, item.claim.claim, f"{item.claim.paper} ({item.claim.source})", item.measured,
            item.verdict + (f": {item.why}" if item.why else ""),
        ]
        for item in judged
    ]
    note = (
        f"Claims from {origin}. A claim holds when every cell of cases it compares confirms it beyond the "
        "interval; it does not hold when one contradicts it; it is inconclusive when the intervals cannot tell."
    )
    columns = (
        Column("finding", False), Column("claim", False), Column("paper", False), Column("measured", False),
        Column("verdict", False),
    )
    return Table("findings", "Findings", note, columns, rows)


#: Verdicts in the plural, for the tally.
PLURAL = {"holds": "hold", "does not hold": "do not hold"}


def tally(judged: list[Judged]) -> str:
    """'3 hold, 1 does not hold, 2 not measured'."""
    counts = Counter(item.verdict for item in judged)
    return ", ".join(f"{count} {verdict if count == 1 else PLURAL.get(verdict, verdict)}" for verdict, count in counts.items())


def findings_markdown(run: RunRow, judged: list[Judged], origin: str, floors: dict[str, NoiseFloor]) -> str:
    """The findings as a Markdown page for docs/findings/: the command, when and on what machine it
    ran, where the noise floors came from, then the table."""
    env = run.environment
    variant = "--quick" if run.options.get("quick") else "--full" if run.options.get("full") else ""
    started = datetime.fromtimestamp(run.started_unix_ms / 1000, UTC)
    length = f", {format_duration_us((run.ended_unix_ms - run.started_unix_ms) * 1000)}" if run.ended_unix_ms else ""
    memory_gib = env.get("memory_bytes", 0) / 2**30
    load = env.get("load_average") or ["?"]
    floor_sources = sorted({floor.source for floor in floors.values()}) or [NOT_MEASURED]
    return "\n".join([
        f"# Findings: {run.suite}",
        "",
        f"- **Command:** `gauntlet suite run {run.suite}{' ' + variant if variant else ''}`, then `gauntlet findings {run.run_id} --markdown`",
        f"- **Run:** {run.run_id}, {started:%Y-%m-%d %H:%M} UTC{length}, {run.status}, {run.stored_cases} of {run.planned_cases} cases"
        f" (Gauntlet {run.gauntlet_version})",
        f"- **Machine:** {env.get('cpu_model', '?')}, {env.get('cores', '?')} cores, {memory_gib:.0f} GiB, {env.get('os', '?')},"
        f" kernel {env.get('kernel', '?')}; load average {load[0]} when it began",
        f"- **Noise floors:** {'; '.join(floor_sources)}",
        f"- **Tally:** {tally(judged)}",
        "",
        markdown_table(findings_table(judged, origin)),
        "",
    ])


def findings_json(judged: list[Judged], origin: str) -> dict[str, Any]:
    return {
        "claims_from": origin,
        "findings": [
            {
                "id": item.claim.id, "claim": item.claim.claim, "source": item.claim.source, "paper": item.claim.paper,
                "kind": item.claim.kind, "verdict": item.verdict, "measured": item.measured, "why": item.why,
            }
            for item in judged
        ],
    }

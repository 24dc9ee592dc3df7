"""A study's findings as a table: each claim, the paper's figure and where it says so, what this
run measured, and the verdict (gauntlet.analysis.findings)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from gauntlet.analysis.findings import Judged
from gauntlet.report.views import Column, Table


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


def tally(judged: list[Judged]) -> str:
    """'3 hold, 1 does not hold, 2 not measured'."""
    counts = Counter(item.verdict for item in judged)
    return ", ".join(f"{count} {verdict if count == 1 or verdict != 'holds' else 'hold'}" for verdict, count in counts.items())


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

"""SPECweb2005's headline view of session loads: the valid sessions of a series of levels and the
server's cost per page at the valid one, read from the study's store (users 2 valid, 30 not)."""

from __future__ import annotations

from pathlib import Path

from gauntlet.report.points import grid_points
from gauntlet.analysis.qos import pages_of
from gauntlet.report.specweb import per_page, specweb_table
from gauntlet.store import Store
from tests.report.test_summary import summary_text


def test_the_valid_sessions_and_the_cost_per_page_at_that_level(study_db: tuple[Path, int]) -> None:
    path, run_id = study_db
    with Store.open(path, create=False) as store:
        points = grid_points(store.cases([run_id]))
    table = specweb_table(points)
    assert len(table.rows) == 1, table.rows
    row = dict(zip((c.name for c in table.columns), table.rows[0], strict=True))
    assert (row["valid sessions"], row["first invalid above"]) == ("2", "30")
    valid = next(p for p in points if p.params.get("users") == 2).measured[0].result
    assert valid is not None
    server = valid["server"]
    pages = pages_of(valid)
    cpu_ms, switches, faults = per_page(valid) or (0.0, 0.0, 0.0)
    assert pages > 0 and cpu_ms == (server["cpu_user_s"] + server["cpu_system_s"]) * 1e3 / pages
    assert switches == (server["voluntary_switches"] + server["involuntary_switches"]) / pages
    assert faults == (server["minor_faults"] + server["major_faults"]) / pages
    shown = f"{cpu_ms:,.1f}" if cpu_ms >= 10 else f"{cpu_ms:.2f}"
    assert row["server CPU ms/page"] == shown
    assert "Sessions that stayed valid, and the server's cost per page" in summary_text(path, [run_id])

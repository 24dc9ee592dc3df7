"""The noise floors table (migration 0010): calibrate noise writes, compare reads the latest per
figure, preferring one measured on the runs' kind of server."""

from __future__ import annotations

from pathlib import Path

from gauntlet.store import Store
from gauntlet.store.noise import Measured


def measured(server: str, requests_per_s: float) -> Measured:
    return Measured({"requests_per_s": requests_per_s, "latency_p50_us": 0.2}, 5, server, "-c 10 -d 2s", "lab-host")


def test_the_latest_floor_of_each_figure_and_of_the_kind_asked(tmp_path: Path) -> None:
    with Store.open(tmp_path / "results.db") as store:
        assert store.noise_floors() == {}
        store.add_noise_floors(measured("nginx, 2 workers", 0.30), measured_unix_ms=1_000)
        store.add_noise_floors(measured("builtin, 2 workers", 0.08), measured_unix_ms=2_000)
        store.add_noise_floors(Measured({"requests_per_s": 0.10}, 3, "builtin, 2 workers", "-c 10 -d 2s", "lab-host"), 3_000)
        latest = store.noise_floors()
        nginx = store.noise_floors("nginx")
        apache = store.noise_floors("apache-event")
    assert latest["requests_per_s"].relative == 0.10 and latest["latency_p50_us"].relative == 0.2
    assert latest["requests_per_s"].source.startswith("measured on lab-host 1970-01-01 00:00 UTC, 3 A/A pairs on builtin")
    assert nginx["requests_per_s"].relative == 0.30 and "on nginx, 2 workers, -c 10 -d 2s" in nginx["requests_per_s"].source
    assert apache == latest, "no floor of that kind: the latest of any"

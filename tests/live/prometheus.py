"""Debian's real Prometheus server for a test: started on loopback with its own config (scraping one
target every second) and data directory, asked through its HTTP API, stopped by pid."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import require_installed

PROMETHEUS = Path("/usr/bin/prometheus")
READY_TIMEOUT_S = 30
CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gauntlet
    static_configs:
      - targets: ["{target}"]
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str, **query: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}?{urllib.parse.urlencode(query)}", timeout=10) as answer:
            found = json.load(answer)
        assert found["status"] == "success", found
        return found["data"]

    def query(self, expression: str) -> list[dict[str, Any]]:
        """An instant query's vector: each series' labels (`metric`) and value (`value`, a float)."""
        return [{"metric": r["metric"], "value": float(r["value"][1])} for r in self.get("/api/v1/query", query=expression)["result"]]

    def samples(self, selector: str, window: str = "10m") -> list[float]:
        """Every value scraped for the series `selector` within `window`, oldest first."""
        found = self.get("/api/v1/query", query=f"{selector}[{window}]")["result"]
        assert len(found) == 1, found
        return [float(value) for _, value in found[0]["values"]]

    def has_target(self) -> bool:
        """Its target is known (discovery hands it over a few seconds after the start): scraping
        begins at once when it answers."""
        return bool(self.get("/api/v1/targets")["activeTargets"])


@contextlib.contextmanager
def prometheus_scraping(target: str, directory: Path) -> Iterator[Prometheus]:
    """Prometheus scraping `target` (host:port) every second, until the block ends; its log stays in `directory`."""
    require_installed("prometheus", os.access(PROMETHEUS, os.X_OK), "apt-get install prometheus")
    config = directory / "prometheus.yml"
    config.write_text(CONFIG.format(target=target))
    port = free_port()
    with open(directory / "prometheus.log", "wb") as log:
        proc = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        server = Prometheus(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError):
                if server.has_target():
                    break
            assert proc.poll() is None, (directory / "prometheus.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "prometheus had no target in time"
            time.sleep(0.2)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

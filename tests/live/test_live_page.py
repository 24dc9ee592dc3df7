"""`gauntlet suite run quick --live` watched in headless Chromium (no network): mid-suite the page
shows the current case, a requests/s figure that changes and the cases finished; once the suite
ends its port refuses connections and none of its processes is left."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import psutil
import pytest

from gauntlet.servers.process import leftovers
from tests.helpers.browser import headless_chromium, screenshot
from tests.helpers.cli_process import Running
from tests.live.prometheus import free_port

pytestmark = pytest.mark.slow

SUITE_TIMEOUT_S = 300
#: The page's figure once a second of load has come in: a number, not the dash it starts with.
RATE_SHOWN = "document.getElementById('rate').textContent.match(/^[0-9,]+$/) !== null"


def test_the_page_follows_a_suite_and_goes_away_with_it(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    args = ["suite", "run", "quick", "--quick", "--servers", "builtin", "--live", f"127.0.0.1:{port}",
            "--db", tmp_path / "results.db", "-o", tmp_path / "report.html"]
    with headless_chromium() as browser, Running(*args) as suite:
        suite.wait_for_stderr(rf"^live: {url}$", 60)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        asked: list[str] = []
        problems: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url) else route.abort())
        page.goto(url)
        page.wait_for_function("document.getElementById('current').textContent.startsWith('builtin')", timeout=60_000)
        page.wait_for_function(RATE_SHOWN, timeout=30_000)
        first_rate = page.text_content("#rate")
        page.wait_for_function(f"{RATE_SHOWN} && document.getElementById('rate').textContent !== {json.dumps(first_rate)}", timeout=30_000)
        page.wait_for_selector("#finished table tbody tr", timeout=60_000)
        finished = page.locator("#finished table").last.inner_text()
        assert "builtin" in finished and "req/s" in finished
        assert page.locator("#chart-rate .scatterlayer .trace").count() >= 1, "the requests/s chart drew"
        screenshot(page, "live.png")
        processes = [child.pid for child in psutil.Process(suite.proc.pid).children(recursive=True)]
        done = suite.wait(SUITE_TIMEOUT_S)
        assert done.code == 0, done.stderr[-3000:]
        page.wait_for_function("document.getElementById('status').textContent.startsWith('stopped')", timeout=10_000)
    assert problems == []
    assert asked and all(address.startswith(url) for address in asked), "nothing but the live server was asked"
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    assert leftovers([suite.proc.pid, *processes], port) == []

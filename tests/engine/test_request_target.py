"""What goes on the request line, as nginx logged it (`"$request"` in its access log): a URL's path
and query, a paths mix's paths and a load file's pages percent-encoded once as RFC 3986 requires;
control characters refused before anything is sent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from tests.cli.test_errors import CLOSED, assert_one_line_error
from tests.helpers.cli_process import run_cli
from tests.helpers.logs import log_lines

#: (as given, as sent): characters outside RFC 3986's path and query sets encoded, escapes kept,
#: the fragment left out.
TARGETS = [
    ('/webtest.html?q=<script>"{x}|y\\^`', "/webtest.html?q=%3Cscript%3E%22%7Bx%7D%7Cy%5C%5E%60"),
    ("/webtest.html?name=caf\u00e9 au lait", "/webtest.html?name=caf%C3%A9%20au%20lait"),
    ("/webtest.html?done=%3C%20&pct=100%", "/webtest.html?done=%3C%20&pct=100%25"),
    ("/web[test].html#part", "/web%5Btest%5D.html"),
]


def request_lines(server: ServerInstance, expected: int) -> list[str]:
    """The request lines nginx logged, in order, once it has `expected` of them."""
    lines = log_lines(server.workdir / "logs" / "access.log", expected)
    return [line.split('"')[1] for line in lines]


def test_urls_and_paths_are_sent_percent_encoded(nginx_server: Callable[..., ServerInstance]) -> None:
    server = nginx_server(workers=1, access_log=True)
    base = server.url.rstrip("/")
    for given, _ in TARGETS:
        result = engine.run({"url": base + given, "connections": 1, "requests": 1}).result
        assert result["responses"] == 1, given
    mix = [{"path": given, "weight": 1.0} for given, _ in TARGETS]
    result = engine.run({"url": base + "/", "connections": 1, "requests": 40, "paths": mix}).result
    assert result["responses"] == 40
    lines = request_lines(server, len(TARGETS) + 40)
    assert lines[: len(TARGETS)] == [f"GET {sent} HTTP/1.1" for _, sent in TARGETS]
    assert set(lines[len(TARGETS):]) <= {f"GET {sent} HTTP/1.1" for _, sent in TARGETS}


def test_a_load_file_s_pages_are_sent_percent_encoded(nginx_server: Callable[..., ServerInstance], tmp_path: Path) -> None:
    server = nginx_server(workers=1, access_log=True)
    load = tmp_path / "load.yaml"
    load.write_text(
        "sessions:\n  - name: odd\n    pages:\n      - {name: page, path: '/webtest.html?<a b>', embedded: ['/image_small.gif?{x}']}\n"
        "users: 1\nmeasure: 300ms\n"
    )
    done = run_cli("run", "--load", load, server.url, "--no-store")
    assert done.code == 0, done.stderr
    lines = set(request_lines(server, 2))
    assert lines == {"GET /webtest.html?%3Ca%20b%3E HTTP/1.1", "GET /image_small.gif?%7Bx%7D HTTP/1.1"}, lines


@pytest.mark.parametrize("control", ["\r\nX-Injected: 1", "\t", "\x01", "\x7f"])
def test_control_characters_in_a_path_are_refused(control: str) -> None:
    assert_one_line_error(run_cli("run", f"{CLOSED}a{control}b", "-n", "1"), "in its path. Remove it, or percent-encode it")
    with pytest.raises(GauntletError, match="paths mix is not a path"):
        engine.run({"url": CLOSED, "connections": 1, "requests": 1, "paths": [{"path": f"/a{control}", "weight": 1.0}]})

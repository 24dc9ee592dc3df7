"""SPECweb2005's Banking, Ecommerce and Support applications through each PHP backend and as JSP on
Tomcat: every page
type answers with its content marker and its embedded images, BeSim answered exactly the calls the
pages made, the session cookie is what carries a user from page to page, a page whose back end
fails comes back without its marker, and the load files walk these pages: through the engine,
valid, and with a broken back end, failing QoS."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections import Counter
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml

from gauntlet.errors import GauntletError
from gauntlet.analysis.qos import verdict
from gauntlet.engine import run
from gauntlet.model import loadfile
from gauntlet.model.loadfile import LOADS
from gauntlet.servers.apps.besim import besim_stats, set_failing
from gauntlet.servers.apps.specweb import IMAGES, PAGES, Page, language, page_named
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.registry import check_spec
from gauntlet.servers.spec import ServerSpec
from tests.conftest import Start

#: One server for each way PHP runs: a FastCGI pool, a module inside the server, a program per request.
PATHS = [
    ServerSpec("nginx", backend="php-fpm", app="specweb", php_sessions="memory"),
    ServerSpec("apache-prefork", backend="mod_php", app="specweb"),
    ServerSpec("apache-event", backend="php-cgi", app="specweb"),
    ServerSpec("tomcat", app="specweb"),
]
WORKLOADS = ("bank", "shop", "support")


class Browser:
    """A user: one cookie jar across its requests, as a browser keeps it."""

    def __init__(self, instance: ServerInstance) -> None:
        self.base = instance.url.rstrip("/")
        self.language = language(instance.spec)
        self.cookies = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def fetch(self, path: str, body: str | None = None) -> tuple[int, bytes]:
        data = body.encode() if body is not None else None
        try:
            with self.opener.open(self.base + path, data=data, timeout=30) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def visit(self, page: Page) -> bytes:
        status, body = self.fetch(page.path(self.language), page.body)
        assert status == 200 and page.marker.encode() in body, (page.workload, page.name, status, body[:300])
        return body


def images_of(body: bytes) -> list[str]:
    return re.findall(r'<img src="/specweb/images/([^"]+)"', body.decode())


@pytest.mark.parametrize("spec", PATHS, ids=lambda spec: f"{spec.kind}-{spec.backend or 'jsp'}")
def test_every_page_type_through_each_php_backend(spec: ServerSpec, server: Start) -> None:
    instance = server(spec)
    besim = instance.backends[-1]
    assert besim.name == "besim" and besim.port is not None
    before = Counter(besim_stats(besim.port)["calls"])  # the start's own check of the Support pages
    expected: Counter[str] = Counter()
    for workload in WORKLOADS:
        user = Browser(instance)
        for page in (page for page in PAGES if page.workload == workload):
            body = user.visit(page)
            expected.update(page.calls)
            if page.static:
                continue
            shown = images_of(body)
            assert shown, f"{page.name} embeds no image"
            for image in shown:
                status, data = user.fetch(f"/specweb/images/{image}")
                assert status == 200 and len(data) == IMAGES[image], image
    if spec.kind == "tomcat":  # the load files' (PHP) URLs reach the JSP pages
        page = page_named("support", "catalog")
        status, body = Browser(instance).fetch(page.path("php"))
        assert status == 200 and page.marker.encode() in body
        expected.update(page.calls)
    calls = Counter(besim_stats(besim.port)["calls"])
    calls.subtract(before)
    assert +calls == expected


def test_the_session_cookie_carries_the_user(server: Start) -> None:
    instance = server(PATHS[0])
    user = Browser(instance)
    user.visit(page_named("bank", "login"))
    assert [cookie.name for cookie in user.cookies] == ["PHPSESSID"]
    summary = page_named("bank", "account_summary")
    assert b"user 17" in user.visit(summary)

    stranger = Browser(instance)
    status, body = stranger.fetch(summary.path())
    assert status == 403 and summary.marker.encode() not in body
    assert list(stranger.cookies), "a new session is offered"

    user.visit(page_named("bank", "logout"))
    status, body = user.fetch(summary.path())
    assert status == 403 and summary.marker.encode() not in body


def test_a_broken_back_end_gives_pages_without_their_marker(server: Start) -> None:
    instance = server(PATHS[0])
    besim = instance.backends[-1]
    assert besim.port is not None
    assert psutil.Process(besim.proc.pid).name() == "besim", "the monitor's database role goes by this name"
    user = Browser(instance)
    page = page_named("support", "catalog")
    set_failing(besim.port, True)
    status, body = user.fetch(page.path())
    assert status == 502 and page.marker.encode() not in body
    set_failing(besim.port, False)
    user.visit(page)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_load_files_walk_the_applications_pages(workload: str) -> None:
    """Every page of model/loads/specweb-*.yaml is a page type of the application, with its path,
    form and marker; the chain starts on a page and each page's transitions sum to one."""
    name = {"bank": "banking", "shop": "ecommerce", "support": "support"}[workload]
    (session,) = yaml.safe_load((LOADS / f"specweb-{name}.yaml").read_text())["sessions"]
    pages = {page["name"]: page for page in session["pages"]}
    assert set(pages) == {page.name for page in PAGES if page.workload == workload}
    for page in (page for page in PAGES if page.workload == workload):
        written = pages[page.name]
        assert written["path"].split("?")[0] == page.path()
        assert written["expect"] == page.marker
        assert (written.get("method", "GET"), written.get("body")) == (page.method, page.body)
        assert all(image.removeprefix("/specweb/images/") in IMAGES for image in written.get("embedded", []))
    assert session["start"] in pages
    assert set(session["transitions"]) == set(pages)
    for leaving, to in session["transitions"].items():
        assert set(to) <= {*pages, "end"}, leaving
        assert sum(to.values()) == pytest.approx(1.0), leaving


@pytest.mark.parametrize(
    ("spec", "cause"),
    [
        (ServerSpec("tomcat", app="wordpress"), "Tomcat runs JSP"),
        (ServerSpec("nginx", backend="php-fpm", app="wordpress", php_sessions="memory"), "specweb application's session"),
        (ServerSpec("nginx", backend="uwsgi", app="specweb"), "runs on PHP"),
    ],
)
def test_what_cannot_work_is_refused_before_anything_starts(spec: ServerSpec, cause: str) -> None:
    with pytest.raises(GauntletError, match=cause) as refused:
        check_spec(spec)
    assert "\n" not in str(refused.value) and refused.value.fix


def test_banking_sessions_through_the_engine_and_a_broken_back_end_fails_qos(server: Start, tmp_path: Path) -> None:
    """The Banking load file walked by the engine's sessions (the Markov chain, the cookie jar, the
    POST forms): every page type valid; with BeSim failing, every page fails its check and QoS."""
    instance = server(PATHS[0])
    besim = instance.backends[-1]
    assert besim.port is not None
    # The file as shipped but for its think time, so that a short run visits every page type.
    text = (LOADS / "specweb-banking.yaml").read_text().replace("think: {exponential: 2s}", "think: 20ms")
    path = tmp_path / "banking.yaml"
    path.write_text(text)
    short = {"users": 4, "ramp_up": "0s", "warm_up": "200ms", "measure": "2s", "ramp_down": "0s"}

    def walk() -> dict[str, Any]:
        sessions: dict[str, Any] = run(loadfile.load(path, short).to_plan(instance.url).engine_json()).result["sessions"]
        return sessions

    working = walk()
    judged = verdict(working)
    assert judged.valid, [(p.name, p.count, p.invalid, p.good_share) for p in judged.pages]
    assert {p.name for p in judged.pages} == {page.name for page in PAGES if page.workload == "bank"}
    set_failing(besim.port, True)
    broken = walk()
    assert not verdict(broken).valid
    for name, page in broken["pages"].items():
        assert page["count"] == 0 or page["invalid"] == page["fail"] == page["count"], (name, page)
    assert sum(page["count"] for page in broken["pages"].values()) > 0

"""WordPress on MariaDB through every PHP path Gauntlet runs: each serves the seeded home page and
post with their content markers; PHP's options (OPcache off, the APCu object cache) take effect;
a combination that cannot work is refused before anything starts; a page broken by its database
is counted as a failure by the engine; MariaDB's processes are the `database` role."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gauntlet.engine import run
from gauntlet.model import loadfile
from gauntlet.errors import GauntletError
from gauntlet.monitor.sampler import Sampler
from gauntlet.servers.apps.mariadb import Layout, run_sql
from gauntlet.servers.apps.wordpress import Page, pages
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.pids import kill_all, wait_gone
from gauntlet.servers.process import http_get
from gauntlet.servers.registry import start_server
from gauntlet.servers.spec import ServerSpec
from tests.conftest import Start, require_app
from tests.helpers.cli_process import run_cli

#: Every server path the thesis compared, and Caddy and h2o through PHP-FPM.
PATHS = [
    ServerSpec("nginx", backend="php-fpm", app="wordpress"),
    ServerSpec("lighttpd", backend="php-fpm", app="wordpress"),
    ServerSpec("apache-prefork", backend="mod_php", app="wordpress"),
    ServerSpec("apache-event", backend="php-fpm", app="wordpress"),
    ServerSpec("caddy", backend="php-fpm", app="wordpress"),
    ServerSpec("h2o", backend="php-fpm", app="wordpress"),
]
NGINX = PATHS[0]
#: Reports what PHP runs with, from inside WordPress (written into one instance's docroot).
PROBE = b"""<?php
require __DIR__ . '/wp-load.php';
echo json_encode(['opcache' => (bool) ini_get('opcache.enable'), 'object_cache' => (bool) wp_using_ext_object_cache(),
    'apcu_entries' => function_exists('apcu_cache_info') ? apcu_cache_info(true)['num_entries'] : null]);
"""


@pytest.fixture(scope="module")
def seeded() -> Iterator[dict[str, Page]]:
    """The machine's seed, built once for the module (about 20 s the first time)."""
    require_app(NGINX)
    yield pages()


def get(instance: ServerInstance, path: str) -> tuple[int, bytes]:
    answer = http_get(instance.host, instance.port, path, timeout_s=30.0)
    assert answer is not None, f"no response from {instance.kind} for {path}"
    return answer


def load(instance: ServerInstance, page: Page, requests: int = 20) -> dict[str, Any]:
    plan = {"url": instance.url.rstrip("/") + page.path, "connections": 2, "threads": 1, "requests": requests,
            "expect": page.marker, "timeout_us": 30_000_000}
    return run(plan).result


@pytest.mark.parametrize("spec", PATHS, ids=lambda spec: f"{spec.kind}-{spec.backend}")
def test_each_php_path_serves_the_seeded_pages(spec: ServerSpec, seeded: dict[str, Page], server: Start) -> None:
    instance = server(spec)
    assert [b.name for b in instance.backends][-1] == "mariadb"
    for page in seeded.values():
        status, body = get(instance, page.path)
        assert status == 200 and page.marker.encode() in body, (page.name, status, body[:200])
        result = load(instance, page)
        assert result["responses"] == 20 and result["errors"]["content"] == 0, result["errors"]
    # The seed's images are attachments the posts link to.
    status, body = get(instance, "/wp-content/uploads/seed-01.jpg")
    assert status == 200 and len(body) > 1000


def probe(instance: ServerInstance) -> dict[str, Any]:
    path = instance.workdir / "docroot" / "gauntlet-probe.php"
    path.write_bytes(PROBE)
    path.chmod(0o644)
    status, body = get(instance, "/gauntlet-probe.php")
    assert status == 200, body[:300]
    return json.loads(body)


@pytest.mark.parametrize(
    "spec",
    [NGINX.with_(opcache=False), NGINX.with_(apcu=True), PATHS[2].with_(opcache=False), PATHS[2].with_(apcu=True)],
    ids=["php-fpm-no-opcache", "php-fpm-apcu", "mod_php-no-opcache", "mod_php-apcu"],
)
def test_php_options_take_effect(spec: ServerSpec, seeded: dict[str, Page], server: Start) -> None:
    require_app(spec)
    instance = server(spec)
    load(instance, seeded["home"], requests=5)
    found = probe(instance)
    assert found["opcache"] is spec.opcache
    assert found["object_cache"] is spec.apcu
    if spec.apcu:
        assert found["apcu_entries"] > 10, "the pages' reads were kept in APCu"


def test_the_database_can_listen_on_loopback_tcp(seeded: dict[str, Page], server: Start) -> None:
    instance = server(NGINX.with_(database_socket="tcp"))
    database = instance.backends[-1]
    assert database.port is not None and database.port in instance.ports
    assert load(instance, seeded["post"])["errors"]["content"] == 0


@pytest.mark.parametrize(
    ("spec", "cause"),
    [
        (ServerSpec("apache-event", backend="mod_php", app="wordpress"), "threaded MPM"),
        (ServerSpec("tomcat", backend="php-fpm", app="wordpress"), "static files only"),
        (ServerSpec("nginx", backend="uwsgi", app="wordpress"), "runs on PHP"),
        (ServerSpec("nginx", app="wordpress"), "needs a PHP backend"),
        (ServerSpec("nginx", backend="php-fpm", apcu=True), "needs an application"),
        (ServerSpec("nginx", backend="uwsgi", opcache=False), "only php-fpm and mod_php"),
        (ServerSpec("nginx", backend="php-fpm", app="drupal"), "not an application"),
    ],
)
def test_a_combination_that_cannot_work_is_refused_before_anything_starts(
    spec: ServerSpec, cause: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a start would make its work dir
    with pytest.raises(GauntletError, match=cause) as refused:
        start_server(spec)
    assert "\n" not in str(refused.value) and refused.value.fix
    assert list(tmp_path.iterdir()) == []


def test_a_page_broken_by_its_database_is_a_failure(seeded: dict[str, Page], server: Start) -> None:
    instance = server(NGINX)
    layout = Layout(instance.workdir / "mariadb")
    # The posts table gone: WordPress answers the home page 200, with no posts on it.
    run_sql(layout, "RENAME TABLE wordpress.wp_posts TO wordpress.wp_posts_gone")
    status, body = get(instance, "/")
    assert status == 200 and b"Nothing found" in body
    broken = load(instance, seeded["home"])
    assert (broken["responses"], broken["errors"]["content"]) == (0, 20)
    run_sql(layout, "RENAME TABLE wordpress.wp_posts_gone TO wordpress.wp_posts")
    assert load(instance, seeded["home"])["errors"]["content"] == 0
    # An empty database: WordPress sends every page to its installer.
    run_sql(layout, "DROP DATABASE wordpress; CREATE DATABASE wordpress")
    status, _ = get(instance, "/")
    assert status == 302
    installer = load(instance, seeded["home"])
    assert (installer["responses"], installer["errors"]["content"]) == (0, 20)
    # MariaDB gone: "Error establishing a database connection" with a 500, counted by its status.
    database = instance.backends[-1]
    database.proc.kill()
    database.proc.wait()
    status, body = get(instance, "/")
    assert status == 500 and b"Error establishing a database connection" in body
    dead = load(instance, seeded["home"])
    assert dead["status_codes"] == {"500": 20} and dead["errors"]["content"] == 0


def test_mariadb_is_the_database_role(seeded: dict[str, Page], server: Start) -> None:
    instance = server(NGINX)
    with Sampler.of(instance, interval_s=0.1) as sampler:
        load(instance, seeded["home"], requests=10)
    memory = sampler.totals().memory
    assert memory["database"].processes == 1 and memory["database"].rss_bytes > 10 * 2**20
    assert memory["backend"].processes == 3  # PHP-FPM's master and its two workers
    assert {"master", "worker"} <= set(memory)


def test_one_command_runs_the_post_page_with_its_marker(seeded: dict[str, Page], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    post = seeded["post"]
    done = run_cli("run", "--server", "nginx", "--app", "wordpress", "--no-opcache", "--path", post.path,
                   "-n", "20", "-c", "2", "--json", out, timeout_s=120)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["plan"]["expect"] == post.marker and result["plan"]["url"].endswith(post.path)
    assert (result["responses"], result["errors"]["content"]) == (20, 0)


def test_the_cli_refuses_mod_php_on_a_threaded_apache_in_one_line() -> None:
    done = run_cli("run", "--server", "apache-event", "--app", "wordpress", "--backend", "mod_php", "-n", "1")
    assert done.code != 0 and "threaded MPM" in done.stderr and "Traceback" not in done.stderr


def test_gauntlet_servers_lists_where_wordpress_runs() -> None:
    done = run_cli("servers", "--json")
    assert done.code == 0, done.stderr
    listed = {(a["kind"], a["backend"]): a["reason"] for a in json.loads(done.stdout)["apps"] if a["app"] == "wordpress"}
    assert listed[("apache-event", "mod_php")].startswith("unsupported: mod_php is an Apache module")
    assert listed[("tomcat", "php-fpm")].startswith("unsupported: ")
    for kind in ("nginx", "lighttpd", "apache-prefork", "apache-event", "caddy", "h2o"):
        assert not (listed[(kind, "php-fpm")] or "").startswith("unsupported"), kind
    assert "Applications by server kind" in run_cli("servers").stdout


#: Builds the seed into a directory of its own, so that the build runs whatever the machine's cache holds.
SEED_BUILDER = """
import sys, tempfile
tempfile.tempdir = sys.argv[1]
from gauntlet.servers.apps.seed import seed
seed()
"""


def test_a_build_killed_mid_seed_leaves_no_mariadbd_and_no_cache(seeded: dict[str, Page]) -> None:
    # Not pytest's tmp_path: its parents are private to root, and mariadbd runs as mysql.
    tmp_path = Path(tempfile.mkdtemp(prefix="gauntlet-seed-test-"))
    tmp_path.chmod(0o755)
    builder = subprocess.Popen([sys.executable, "-c", SEED_BUILDER, str(tmp_path)])
    try:
        deadline = time.monotonic() + 60
        while not (found := builder_databases(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert found, "the build started no mariadbd within 60 s"
        builder.kill()
        builder.wait(timeout=10)
        assert not wait_gone(found, 15.0), "mariadbd outlived the killed build"
        deadline = time.monotonic() + 10
        while (left := list(tmp_path.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], "the guard removes the half-built seed with its premises"
    finally:
        if builder.poll() is None:
            builder.kill()
            builder.wait(timeout=10)
        kill_all([p.pid for p in builder_databases(tmp_path)], 5.0)
        shutil.rmtree(tmp_path, ignore_errors=True)


def builder_databases(under: Path) -> list[psutil.Process]:
    """mariadbd processes whose config lies below `under`."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "mariadbd" and any(str(under) in arg for arg in process.info["cmdline"] or []):
            found.append(process)
    return found


def test_the_wordpress_load_file_expects_the_seeds_own_markers(seeded: dict[str, Page]) -> None:
    """The suite's session (model/loads/thesis-wordpress.yaml) names each page's marker in YAML: they
    must be the ones the seed writes, or every page of the suite would fail its content check."""
    load = loadfile.load(loadfile.find("thesis-wordpress", Path(".")))
    (reader,) = load.sessions
    assert {page.name: (page.path, page.expect) for page in reader.pages} == {
        name: (page.path, page.marker) for name, page in seeded.items()
    }

"""`gauntlet servers` and the registry's table behind it: every kind and every kind-backend pair,
with a version or the reason it cannot run here."""

from __future__ import annotations

import json

from gauntlet.servers.backends.catalog import BACKENDS
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.registry import KINDS, Kind, combination, combinations
from tests.helpers.cli_process import run_cli


def test_lists_every_kind_and_pair_with_a_version_or_a_reason() -> None:
    done = run_cli("servers", "--json", timeout_s=60)
    assert done.code == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [k["kind"] for k in listed["kinds"]] == list(KINDS)
    assert all((k["version"] is None) != (k["reason"] is None) for k in listed["kinds"])
    assert {k["kind"]: k["no_http2"] for k in listed["kinds"]} == {name: kind.no_http2 for name, kind in KINDS.items()}
    pairs = {(p["kind"], p["backend"]): p for p in listed["combinations"]}
    assert set(pairs) == {(k, b) for k in KINDS for b in BACKENDS}
    for pair in pairs.values():
        if pair["gateway"] is None:
            assert pair["reason"].startswith("unsupported: ")
        else:
            assert (pair["version"] is None) != (pair["reason"] is None)
            assert pair["reason"] is None or pair["reason"].startswith("not installed: apt-get install ")
    assert pairs[("apache-prefork", "mod_php")]["gateway"] == "module"
    assert "thread-safe" in pairs[("apache-event", "mod_php")]["reason"]
    assert pairs[("nginx", "python-cgi")]["gateway"] == "fastcgi"


def test_the_table_prints_the_reasons_under_it() -> None:
    done = run_cli("servers", timeout_s=60)
    assert done.code == 0, done.stderr
    for kind in KINDS:
        assert kind in done.stdout
    assert "unsupported: mod_php is an Apache module" in done.stdout


def test_a_kind_or_backend_that_is_not_installed_says_what_to_install() -> None:
    ghost = Kind("ghost", "ghost-httpd", lambda: None, "-v", start_nginx, backends={"python-cgi": "fastcgi"})
    assert ghost.availability().reason == "not installed: apt-get install ghost-httpd"
    pair = combination(ghost, "python-cgi")
    assert pair.supported and not pair.available
    assert pair.reason is not None and pair.reason.startswith("not installed: apt-get install ghost-httpd")
    assert [p.reason for p in combinations([ghost]) if p.backend == "php-fpm"] == [
        "unsupported: Gauntlet's ghost driver cannot run php-fpm"
    ]

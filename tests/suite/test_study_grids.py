"""The Deathmatch, Nguyen and SPECweb dynamic suites expand to their papers' grids
(docs/suites.md#deathmatch, #nguyen, docs/specweb.md): servers and their settings, load model,
levels, timeouts, repeats; every quick case outlasts its timeout; a group axis of server settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from gauntlet.model.case import Case
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite


def cases(name: str, quick: bool = False) -> list[Case]:
    loaded = load_suite(name, quick)
    kinds = [entry.kind for entry in loaded.suite.servers]
    return [case for block in expand(loaded.suite, kinds, loaded.path.parent) for case in block.cases]


def test_deathmatch_is_the_papers_rate_sweep_past_saturation() -> None:
    loaded = load_suite("deathmatch")
    assert (loaded.suite.repeats, loaded.suite.restart_every) == (6, 3), "six runs, a restart after three"
    found = cases("deathmatch")
    servers = {case.params["server"] for case in found}
    assert servers == {"apache-prefork", "apache-worker", "inets", "lighttpd", "mochiweb", "nginx", "yaws"}, "every contender"
    for server in servers:
        mine = [c for c in found if c.params["server"] == server]
        assert [c.params["rate_per_s"] for c in mine] == [1000.0 * k for k in range(1, 16)], server
        for case in mine:
            assert case.plan is not None and case.path == "/image_10k.png"
            assert (case.plan.calls_per_connection, case.plan.keepalive) == (10, True)
            assert case.plan.duration_us == 10_000_000


def test_nguyen_is_ab_at_each_servers_concurrency_with_one_process() -> None:
    found = cases("nguyen")
    sweep = [c for c in found if c.group.startswith("concurrency")]
    levels = {
        server: [c.params["connections"] for c in sweep if c.params["server"] == server]
        for server in {c.params["server"] for c in sweep}
    }
    assert levels["apache-prefork"] == list(range(200, 4001, 200))
    assert levels["node"] == list(range(400, 8001, 400))
    assert levels["nginx"] == list(range(1000, 20001, 1000))
    for case in sweep:
        assert case.plan is not None and case.server.workers == 1, "one process per server"
        assert case.plan.keepalive is False, "ab: a new connection per request"
        assert (case.plan.timeout_us, case.plan.duration_us) == (15_000_000, 30_000_000)
        assert case.params["timeout_s"] == 15, "the timeout is part of the case's identity"
    soak = [c for c in found if c.group == "soak"]
    assert {c.params["server"] for c in soak} == set(levels)
    assert all(c.plan is not None and c.plan.requests == 6_000_000 for c in soak)


@pytest.mark.parametrize("name", ["deathmatch", "nguyen"])
def test_quick_cases_outlast_their_timeout(name: str) -> None:
    for case in cases(name, quick=True):
        assert case.plan is not None and case.plan.duration_us is not None and case.plan.timeout_us is not None
        assert case.plan.duration_us > case.plan.timeout_us, f"{case.group}: a timeout could never show"


def test_nguyen_servers_are_sized_for_their_blocks_most_connections() -> None:
    loaded = load_suite("nguyen")
    blocks = expand(loaded.suite, [entry.kind for entry in loaded.suite.servers], loaded.path.parent)
    sized = {(b.server.kind, b.cases[0].group): b.server.expected_connections for b in blocks}
    assert sized == {
        ("apache-prefork", "concurrency-apache"): 4000, ("node", "concurrency-node"): 8000,
        ("nginx", "concurrency-nginx"): 20000, ("apache-prefork", "soak"): 250, ("node", "soak"): 250, ("nginx", "soak"): 250,
    }
    assert all("expected_connections" not in c.params for b in blocks for c in b.cases), "a hint, not a case parameter"


def test_specweb_dynamic_sizes_apache_for_its_sessions_as_the_paper_did() -> None:
    """At Debian's 150 processes the kept-alive connections of 75 thinking users would decide PHP's
    capacity (docs/specweb.md): both PHP configurations raise the limit, the tuned one starts 1,024."""
    php = [case for case in cases("specweb-dynamic") if case.params["server"] == "apache-prefork"]
    assert php and all(case.server.max_request_workers == 4096 for case in php)
    started = {case.group: case.server.workers for case in php}
    assert {group: workers for group, workers in started.items() if group.endswith("-tuned")} == {
        "banking-php-tuned": 1024, "ecommerce-php-tuned": 1024, "support-php-tuned": 1024,
    }
    assert all(workers is None for group, workers in started.items() if group.endswith("-default"))


def test_a_group_axis_turns_the_erlang_schedulers_busy_wait_off(tmp_path: Path) -> None:
    suite = tmp_path / "sbwt.yaml"
    suite.write_text(
        "name: sbwt\nservers: [yaws]\ngroups:\n"
        "  - {name: busy-wait, model: rate, workload: [DM], rate_per_s: [1000], duration: 2s, scheduler_busy_wait: [true, false]}\n"
    )
    loaded = load_suite(str(suite), False)
    found = [case for block in expand(loaded.suite, ["yaws"], tmp_path) for case in block.cases]
    assert [case.server.scheduler_busy_wait for case in found] == [True, False]
    assert [case.params.get("scheduler_busy_wait") for case in found] == [None, False], "the default is no parameter"

"""The inets httpd and MochiWeb drivers against the real servers, beyond what every kind meets
(test_contract.py, test_tls.py): one VM, no epmd, keep-alive limits, their access logs over HTTPS,
what MochiWeb cannot set; and the schedulers' busy wait of every Erlang kind."""

from __future__ import annotations

import psutil
import pytest

from gauntlet.errors import GauntletError
from gauntlet.servers.erlang_vm import ERLANG_KINDS
from gauntlet.servers.process import http_get
from gauntlet.servers.registry import start_server
from gauntlet.servers.spec import ServerSpec
from tests.conftest import Start
from tests.helpers.server_checks import (
    check_closes_idle_connections,
    engine_connections,
    first_field_port,
    requests_before_close,
)


@pytest.mark.parametrize("kind", ["inets", "mochiweb"])
def test_one_vm_with_its_schedulers_and_no_epmd(server: Start, kind: str) -> None:
    instance = server(kind, workers=2)
    beam, *helpers = (psutil.Process(pid) for pid in instance.pids())
    assert beam.name().startswith("beam")
    assert [p.name() for p in helpers] == ["erl_child_setup"], "no epmd, no other OS process"


@pytest.mark.parametrize("kind", ["inets", "mochiweb"])
def test_a_request_limit_closes_the_connection(server: Start, kind: str) -> None:
    assert requests_before_close(server(kind, keepalive_requests=3)) == 3
    assert requests_before_close(server(kind, keepalive=False)) == 1


@pytest.mark.parametrize("kind", ERLANG_KINDS)
def test_the_schedulers_busy_wait_is_turned_off_in_the_vm_that_serves(server: Start, kind: str) -> None:
    spinning, sleeping = server(kind), server(kind, scheduler_busy_wait=False)
    flags = [" ".join(psutil.Process(instance.pids()[0]).cmdline()) for instance in (spinning, sleeping)]
    assert "-sbwt" not in flags[0]
    assert "-sbwt none -sbwtdcpu none -sbwtdio none" in flags[1]
    assert http_get(sleeping.host, sleeping.port, "/webtest.html") is not None


def test_busy_wait_off_on_a_kind_outside_the_erlang_vm_is_refused() -> None:
    with pytest.raises(GauntletError, match="nginx does not support scheduler_busy_wait: it is the Erlang VM's"):
        start_server(ServerSpec("nginx", scheduler_busy_wait=False))


def test_inets_closes_an_idle_connection_after_its_timeout(inets_server: Start) -> None:
    check_closes_idle_connections(inets_server(keepalive_timeout_s=1))


@pytest.mark.parametrize("kind", ["inets", "mochiweb"])
def test_https_access_log_and_engine_agree(server: Start, kind: str) -> None:
    instance = server(kind, tls=True, access_log=True, keepalive=False)
    assert engine_connections(instance, first_field_port, requests=100) == 100


def test_mochiweb_refuses_an_idle_timeout(mochiweb_server: Start) -> None:
    with pytest.raises(GauntletError, match="mochiweb does not support keepalive_timeout_s: .* 300 s"):
        mochiweb_server(keepalive_timeout_s=5)

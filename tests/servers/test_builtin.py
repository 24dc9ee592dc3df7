"""The built-in server driver: `python -m gauntlet serve` as its own process."""

from __future__ import annotations

import json
import os
import urllib.request

import psutil
import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.process import leftovers
from gauntlet.servers.registry import start_server
from gauntlet.servers.spec import ServerSpec

TIMEOUT_S = 5.0


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return response.read()


def test_serves_from_its_own_process(builtin_server):
    assert builtin_server.url.startswith("http://127.0.0.1:")
    assert builtin_server.port > 0
    assert fetch(builtin_server.url + "hello") == b"Hello, World!"
    pids = builtin_server.pids()
    assert os.getpid() not in pids
    assert "serve" in psutil.Process(pids[0]).cmdline()
    assert "--port 0 --threads 2" in builtin_server.config_text


def test_readiness_costs_no_counted_request(builtin_server):
    stats = json.loads(fetch(builtin_server.url + "__gauntlet/stats"))
    assert stats["requests"] == 0


def test_stop_leaves_nothing_also_when_the_body_raises():
    with (
        pytest.raises(RuntimeError, match="test body failed"),
        start_builtin(threads=1) as server,
    ):
        pids, port = server.pids(), server.port
        raise RuntimeError("test body failed")
    assert pids and leftovers(pids, port) == []
    server.stop()


def test_the_registry_pins_tls_version_and_cipher():
    pins = {"tls_version": "1.2", "cipher": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}
    spec = ServerSpec("builtin", workers=1, tls=True, **pins)
    with start_server(spec) as server:
        outcomes = [
            engine.run({"url": server.url + "webtest.html", "connections": 1, "requests": 5, "tls": tls}).result
            for tls in ({"version": "1.2"}, {"version": "1.3"}, {"cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
        ]
    assert [(r["responses"], r["errors"]["tls"]) for r in outcomes] == [(5, 0), (0, 5), (0, 5)]


def test_a_pin_that_cannot_work_is_one_line():
    with pytest.raises(GauntletError) as raised:
        start_builtin(tls=True, tls_version="1.2", cipher="TLS_AES_128_GCM_SHA256")
    assert "\n" not in str(raised.value)
    assert "TLS version and cipher suite do not match" in str(raised.value)

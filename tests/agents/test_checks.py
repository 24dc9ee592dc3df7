"""The checks before a distributed run, in tables: versions, clocks, loopback targets."""

from __future__ import annotations

import pytest

from gauntlet.agents.checks import ClockReading, check_clocks, check_loopback_target, check_versions, worker_host
from gauntlet.errors import GauntletError


def test_the_same_version_everywhere_passes_and_another_is_named() -> None:
    check_versions({"tcp://10.0.0.1:1": "0.1.0", "tcp://10.0.0.2:1": "0.1.0"}, "0.1.0")
    with pytest.raises(GauntletError, match=r"tcp://10.0.0.2:1 has 0.0.9") as caught:
        check_versions({"tcp://10.0.0.1:1": "0.1.0", "tcp://10.0.0.2:1": "0.0.9"}, "0.1.0")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("reading", "refused"),
    [
        (ClockReading(0, 500), False),
        (ClockReading(49_000, 0), False),
        (ClockReading(-60_000, 20_000), False),  # could be 40 ms off: given the benefit of the doubt
        (ClockReading(51_000, 0), True),
        (ClockReading(-1_500_000, 2_000), True),
    ],
)
def test_clocks_off_by_more_than_50_ms_are_refused(reading: ClockReading, refused: bool) -> None:
    readings = {"tcp://10.0.0.1:1": ClockReading(100, 100), "tcp://10.0.0.7:1": reading}
    if not refused:
        check_clocks(readings)
        return
    with pytest.raises(GauntletError, match=r"tcp://10.0.0.7:1 is \d+ ms (ahead of|behind) this machine") as caught:
        check_clocks(readings)
    assert "tcp://10.0.0.1:1" not in str(caught.value) and "Synchronise the clocks" in str(caught.value)


@pytest.mark.parametrize(
    ("address", "host"), [("tcp://10.0.0.5:40001", "10.0.0.5"), ("tcp://[::1]:9", "::1"), ("127.0.0.1:8786", "127.0.0.1")]
)
def test_worker_hosts(address: str, host: str) -> None:
    assert worker_host(address) == host


@pytest.mark.parametrize(
    ("url", "workers", "refused"),
    [
        ("http://127.0.0.1:80/", ["tcp://127.0.0.1:1", "tcp://127.0.0.2:1"], False),
        ("http://localhost:80/", ["tcp://192.0.2.10:1"], False),  # this machine's own address
        ("http://[::1]:80/", ["tcp://192.0.2.99:1"], True),
        ("http://127.0.0.1:80/", ["tcp://127.0.0.1:1", "tcp://198.51.100.3:1"], True),
        ("http://192.0.2.10:80/", ["tcp://198.51.100.3:1"], False),  # a network target: up to the agents
    ],
)
def test_a_loopback_target_needs_every_agent_on_this_machine(url: str, workers: list[str], refused: bool) -> None:
    local = {"127.0.0.1", "192.0.2.10"}
    if not refused:
        check_loopback_target(url, workers, local)
        return
    with pytest.raises(GauntletError, match="loopback, but the agents tcp://.* run elsewhere"):
        check_loopback_target(url, workers, local)

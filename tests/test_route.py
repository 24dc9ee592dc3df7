"""The route to a target, from socket-level facts, agrees with the kernel's own answer (`ip route
get`): loopback for 127.0.0.1, ::1 and this machine's own addresses, the outgoing interface else."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess

import psutil
import pytest

from gauntlet.route import THIS_MACHINE, route_to
from tests.conftest import missing_here


def kernel_route(address: str) -> str | None:
    """The interface `ip route get` names (`local ADDR dev lo ...`, `ADDR via GW dev eth0 ...`); None: no route."""
    if shutil.which("ip") is None:
        missing_here("ip (iproute2) is not installed (apt-get install iproute2)", "CI installs it, so .ci/run is missing it")
    done = subprocess.run(["ip", "route", "get", address], capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        return None
    words = done.stdout.split()
    return words[words.index("dev") + 1]


def own_address() -> str:
    """An IPv4 address of an interface of this machine that is not loopback."""
    for addresses in psutil.net_if_addrs().values():
        for found in addresses:
            if found.family == socket.AF_INET and not ipaddress.ip_address(found.address).is_loopback:
                return str(found.address)
    pytest.skip("this machine has no IPv4 address besides loopback")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "own"])
def test_loopback_and_this_machines_own_addresses_are_loopback(host: str) -> None:
    address = own_address() if host == "own" else host
    route = route_to(f"http://{address}:8080/")
    assert route.loopback and route.interface == kernel_route(address) == "lo"
    assert (route.origin, route.target) == (THIS_MACHINE, address)


def test_ipv6_loopback_is_loopback() -> None:
    if not socket.has_ipv6 or "::1" not in {a.address for addrs in psutil.net_if_addrs().values() for a in addrs}:
        pytest.skip("no ::1 on this machine")
    route = route_to("http://[::1]:8080/")
    assert route.loopback and route.interface == "lo" and route.target == "::1"


def test_an_address_off_this_machine_takes_the_interface_the_kernel_names() -> None:
    """198.51.100.1 (TEST-NET-2) is nobody's: routed by the default route when there is one. Nothing is sent."""
    route = route_to("http://198.51.100.1:80/")
    assert not route.loopback
    assert route.interface == kernel_route("198.51.100.1")
    assert (route.interface is None) == (route.source == "")


def test_a_name_that_does_not_resolve_has_no_route() -> None:
    route = route_to("http://no-such-host.invalid:80/")
    assert (route.target, route.source, route.interface, route.loopback) == ("no-such-host.invalid", "", None, False)

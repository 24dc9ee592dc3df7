"""The network path from this machine to a target: the interface the kernel sends through, and
whether that is loopback (the bandwidth line says what the path is, docs/metrics.md).

Read from socket-level facts: the kernel's choice of source address for a connected socket (a UDP
socket's connect picks the route and sends nothing) and the interfaces that hold the addresses. No
packet is sent, no tool is run, and the answer is this network namespace's.
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from dataclasses import asdict, dataclass
from typing import Any

import psutil

#: Who found the route when it is the machine running the command (an agent names its worker).
THIS_MACHINE = "this machine"


@dataclass(frozen=True)
class Route:
    #: THIS_MACHINE, or the Dask worker (tcp://HOST:PORT) whose probe found it.
    origin: str
    #: The target's address (a host name resolved as a connect does).
    target: str
    #: The address the kernel sends from; "" when it found no route.
    source: str
    #: The interface that address is on (the loopback interface for a target of this machine's own);
    #: None when no route was found or no interface holds the source address.
    interface: str | None
    loopback: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _bare(address: str) -> str:
    """'fe80::1%eth0' -> 'fe80::1'."""
    return address.split("%")[0]


def interfaces_by_address() -> dict[str, str]:
    """Every address of this machine's interfaces, with the interface's name."""
    return {
        _bare(a.address): name
        for name, addresses in psutil.net_if_addrs().items()
        for a in addresses
        if a.family in (socket.AF_INET, socket.AF_INET6)
    }


def route_between(origin: str, target: str, source: str) -> Route:
    """The route from `source` to `target`. The kernel delivers to any of its own addresses over its
    loopback interface (`ip route get` says `local ... dev lo`), not only to 127.0.0.0/8 and ::1."""
    target, source = _bare(target), _bare(source)
    owners = interfaces_by_address()
    if ipaddress.ip_address(target).is_loopback or target in owners:
        loopback = next((name for address, name in owners.items() if ipaddress.ip_address(address).is_loopback), "lo")
        return Route(origin, target, source, loopback, True)
    return Route(origin, target, source, owners.get(source), False)


def route_of_socket(sock: socket.socket, origin: str) -> Route:
    """The route a connected socket takes."""
    return route_between(origin, str(sock.getpeername()[0]), str(sock.getsockname()[0]))


def route_to(url: str, origin: str = THIS_MACHINE) -> Route:
    """The route to the URL's host, resolved as a connect resolves it (its first address)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(address)
            return route_of_socket(probe, origin)
    except OSError:
        return Route(origin, host, "", None, False)

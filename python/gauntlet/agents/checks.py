"""Checks before a distributed run: every agent runs the same Gauntlet, keeps the same time, and
can reach the target at the address the plan gives. Pure functions of what was measured."""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gauntlet.errors import GauntletError

#: Agents whose clocks differ from the controller's by more than this are refused: a second of
#: the merged timeline would mix different seconds, and the agreed start would not be one instant.
MAX_CLOCK_OFFSET_US = 50_000
SYNC_CLOCKS = "Synchronise the clocks of every node (chrony or systemd-timesyncd) and try again"


@dataclass(frozen=True)
class ClockReading:
    """The agent's clock minus the controller's, give or take half the round trip it was read in."""

    offset_us: int
    uncertainty_us: int


def check_versions(versions: Mapping[str, str], controller_version: str) -> None:
    odd = {address: version for address, version in versions.items() if version != controller_version}
    if odd:
        listed = ", ".join(f"{address} has {version}" for address, version in sorted(odd.items()))
        raise GauntletError(
            f"the agents must run this machine's Gauntlet {controller_version}, but {listed}",
            "Install the same Gauntlet (and engine build) on every node",
        )


def check_clocks(readings: Mapping[str, ClockReading], max_offset_us: int = MAX_CLOCK_OFFSET_US) -> None:
    """Refuse agents whose clock is surely off by more than `max_offset_us`: beyond it even when the
    round trip's uncertainty is counted in their favour."""
    off = {
        address: r for address, r in readings.items() if abs(r.offset_us) - r.uncertainty_us > max_offset_us
    }
    if off:
        listed = ", ".join(
            f"{address} is {abs(r.offset_us) / 1_000:.0f} ms {'ahead of' if r.offset_us > 0 else 'behind'} this machine"
            for address, r in sorted(off.items())
        )
        raise GauntletError(f"agent clocks differ too much ({listed}; at most {max_offset_us // 1_000} ms)", SYNC_CLOCKS)


def worker_host(address: str) -> str:
    """'tcp://10.0.0.5:40001' -> '10.0.0.5'; '[::1]' forms lose their brackets."""
    host = urllib.parse.urlsplit(address if "://" in address else f"tcp://{address}").hostname
    return host or ""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_loopback_target(url: str, worker_addresses: Iterable[str], local_hosts: Iterable[str]) -> None:
    """A loopback target is this machine's own: an agent on another machine would load itself."""
    target_host = urllib.parse.urlsplit(url).hostname or ""
    if not is_loopback(target_host):
        return
    local = set(local_hosts)
    remote = sorted(a for a in worker_addresses if not (is_loopback(worker_host(a)) or worker_host(a) in local))
    if remote:
        raise GauntletError(
            f"the target {target_host} is this machine's loopback, but the agents {', '.join(remote)} run elsewhere",
            "Serve the target on a network address and give that URL with --allow-remote",
        )

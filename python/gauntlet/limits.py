"""This machine's limits on connections: a connection is a file, and one process may open only so
many (RLIMIT_NOFILE's hard limit); one source address reaches one server port through the
ephemeral port range only."""

from __future__ import annotations

import math
import resource
from pathlib import Path

#: Files a process needs besides its connections (engine/src/limits.rs RESERVED_FILES).
RESERVED_FILES = 64
#: The share of a source address's ephemeral ports a run plans to use: the kernel searches the
#: range for a free port on every connect, and the search slows as the range fills (measured: with
#: 64,000 sockets in TIME_WAIT on 127.0.0.1, 16,000 connects took over 3 s on 4 threads; from
#: fresh source addresses, under 1 s).
SOURCE_PORT_SHARE = 0.5
#: A server's connections are spread over its processes by a hash of their addresses, not evenly:
#: each process is planned for this share of its files.
SERVER_FILE_SHARE = 0.8
PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def files_per_process() -> int:
    """The most files a process started here may open: the hard limit."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


def ports_per_source() -> int:
    """Ephemeral ports, so connections one source address can open to one server port."""
    low, high = (int(n) for n in PORT_RANGE.read_text().split())
    return high - low + 1


def processes_for(connections: int, file_share: float = 1.0) -> int:
    """Processes needed to hold `connections` open, one file each, using `file_share` of each
    process's files (less 2: a share of the measured and of the idle connections may each be one
    above an even share of them)."""
    return max(1, math.ceil(connections / ((files_per_process() - RESERVED_FILES - 2) * file_share)))


def server_processes_for(connections: int) -> int:
    """Processes of a server that accepts `connections` on one port (SO_REUSEPORT)."""
    return processes_for(connections, SERVER_FILE_SHARE)


def sources_for(connections: int) -> int:
    """Source addresses needed to reach one server port `connections` times."""
    return max(1, math.ceil(connections / (ports_per_source() * SOURCE_PORT_SHARE)))

"""A cgroup of its own for each server instance, so that the kernel counts the CPU of every process
of the server, also of those that live and die between two samples (CGI children).

cgroup v2 first (`cpu.stat` is there in every group, no controller needed), then v1's `cpuacct`
hierarchy. Creating a group needs write access to the hierarchy (root, or a delegated subtree);
without it `create_cgroup` returns None and the monitor falls back to /proc (docs/metrics.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

PROC_MOUNTINFO = "/proc/self/mountinfo"
PROC_CGROUP = "/proc/self/cgroup"
#: Moves the shell into the group named by $0, then becomes the command: every process the command
#: forks is born inside the group, with no window in which a child could escape it.
JOIN_AND_EXEC = 'echo $$ > "$0" && exec "$@"'


@dataclass(frozen=True)
class Cgroup:
    path: Path
    version: int

    @property
    def source(self) -> str:
        """How the monitor names this CPU source: cgroup-v2 or cgroup-v1."""
        return f"cgroup-v{self.version}"

    def cpu_s(self) -> tuple[float, float]:
        """(user, system) CPU seconds of every process that ever ran in the group."""
        if self.version == 2:
            stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
            return int(stat["user_usec"]) / 1e6, int(stat["system_usec"]) / 1e6
        user_ns = int((self.path / "cpuacct.usage_user").read_text())
        system_ns = int((self.path / "cpuacct.usage_sys").read_text())
        return user_ns / 1e9, system_ns / 1e9

    @property
    def procs_path(self) -> Path:
        return self.path / "cgroup.procs"

    def pids(self) -> list[int]:
        try:
            return [int(pid) for pid in self.procs_path.read_text().split()]
        except FileNotFoundError:
            return []

    def wrap(self, argv: list[str]) -> list[str]:
        """The command line that runs `argv` inside this group."""
        return ["/bin/sh", "-c", JOIN_AND_EXEC, str(self.procs_path), *argv]

    def remove(self, timeout_s: float = 2.0) -> bool:
        """Remove the (empty) group; a process just killed may hold it for a moment. False if it stays."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.02)


def cgroup_dirs(mountinfo: str, proc_cgroup: str, controller: str) -> list[tuple[int, Path, Path]]:
    """Where a process's group is in each hierarchy that has `controller` (v1) and in v2's:
    (version, its directory, the hierarchy's mount point), from /proc/self/mountinfo and
    /proc/PID/cgroup."""
    own: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = path
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        separator = fields.index("-")
        root, mountpoint = fields[3], Path(fields[4])
        fstype, options = fields[separator + 1], fields[separator + 3].split(",")
        key = "" if fstype == "cgroup2" else controller if fstype == "cgroup" and controller in options else None
        if key is None or key not in own or not own[key].startswith(root):
            continue
        found.append((2 if key == "" else 1, mountpoint / own[key][len(root) :].lstrip("/"), mountpoint))
    return found


def hierarchies(mountinfo: str, own_cgroups: str) -> list[tuple[int, Path]]:
    """Where this process's own group is in each hierarchy that counts CPU, v2 first: (version,
    directory). `mountinfo` is /proc/self/mountinfo, `own_cgroups` is /proc/self/cgroup."""
    found = [(version, group) for version, group, _ in cgroup_dirs(mountinfo, own_cgroups, "cpuacct")]
    return sorted(found, key=lambda entry: -entry[0])


def create_cgroup(name: str) -> Cgroup | None:
    """A new group below this process's own, in the first hierarchy that lets us; None if none does."""
    try:
        with open(PROC_MOUNTINFO) as mountinfo, open(PROC_CGROUP) as own:
            found = hierarchies(mountinfo.read(), own.read())
    except OSError:
        return None
    for version, parent in found:
        group = Cgroup(parent / name, version)
        try:
            group.path.mkdir()
        except OSError:
            continue
        if (group.path / ("cpu.stat" if version == 2 else "cpuacct.usage_user")).exists():
            return group
        group.remove()
    return None

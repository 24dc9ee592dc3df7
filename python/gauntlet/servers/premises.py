"""Where one server instance lives: a private work dir, a cgroup of its own when the machine offers
one, and the guard (guard.py) that ends its processes and removes both if Gauntlet dies first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gauntlet.monitor.cgroup import Cgroup, create_cgroup
from gauntlet.servers import guard as guard_script
from gauntlet.servers.pids import kill_all


@dataclass
class Premises:
    workdir: Path
    #: All the instance's processes run in it (None: the machine offers none; see docs/metrics.md).
    cgroup: Cgroup | None
    guard: Guard
    #: Directories outside the work dir that the instance uses (session files on a tmpfs), removed with it.
    scratch: list[Path] = field(default_factory=list)

    @classmethod
    def open(cls, kind: str) -> Premises:
        workdir = new_workdir(kind)
        cgroup = create_cgroup(workdir.name)
        try:
            guard = Guard(workdir, cgroup.procs_path if cgroup else None)
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        return cls(workdir, cgroup, guard)

    def run(self, argv: list[str], timeout_s: float, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run a short-lived program to its end inside the cgroup (so that the guard ends it, and
        whatever it forks, if Gauntlet dies first); its output as text."""
        wrapped = self.cgroup.wrap(argv) if self.cgroup else argv
        return subprocess.run(wrapped, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False)

    def release(self, grace_s: float = 2.0) -> None:
        """After the server trees were stopped: kill what is left in the cgroup (an orphaned CGI
        child), remove the cgroup and the work dir, and dismiss the guard; a cgroup that will not
        go is left to the guard, as after a crash."""
        cleared = True
        try:
            if self.cgroup is not None:
                kill_all(self.cgroup.pids(), grace_s)
                cleared = self.cgroup.remove()
        finally:
            for path in [*self.scratch, self.workdir]:
                shutil.rmtree(path, ignore_errors=True)
            self.guard.close(dismissed=cleared)


class Guard:
    """Gauntlet's side: start it, tell it the roots, dismiss it after a normal stop."""

    def __init__(self, workdir: Path, cgroup_procs: Path | None) -> None:
        read_fd, self._write_fd = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", guard_script.__file__, str(workdir), str(cgroup_procs or "")],
                stdin=read_fd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C on our terminal must not end it
            )
        except BaseException:
            os.close(self._write_fd)
            raise
        finally:
            os.close(read_fd)

    def watch(self, pid: int) -> None:
        self._say(str(pid))

    def close(self, dismissed: bool) -> None:
        """Dismissed: nothing is left to clear, and the guard exits without touching anything.
        Otherwise it clears the instance as it would after a crash."""
        if dismissed:
            self._say(guard_script.DISMISSED)
        os.close(self._write_fd)
        self._proc.wait(timeout=10)

    def _say(self, line: str) -> None:
        try:
            os.write(self._write_fd, f"{line}\n".encode())
        except BrokenPipeError:  # the guard is gone (killed by hand): nothing to tell it
            pass


def new_workdir(kind: str) -> Path:
    """A private directory for one server's config, pid file, logs and temp files.

    World-traversable (0755), so that workers which drop privileges (nginx as `nobody`) can read the
    docroot inside it.
    """
    workdir = Path(tempfile.mkdtemp(prefix=f"gauntlet-{kind}-"))
    workdir.chmod(0o755)
    return workdir

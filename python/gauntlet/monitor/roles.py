"""The server's processes, with a role for each process: the master (the process Gauntlet
started), its workers (children running the same program), backends (other programs: PHP-FPM or
uWSGI pools, CGI children) and the database (MariaDB, BeSim), so that a result says which one ran out of
CPU or memory."""

from __future__ import annotations

import os
from pathlib import Path

from gauntlet.monitor.procfs import ProcSample


def descendants(root_pid: int) -> list[int]:
    """The root and every process below it, from the kernel's per-thread children lists."""
    found, queue = [], [root_pid]
    while queue:
        pid = queue.pop()
        found.append(pid)
        # A CGI child may exit at any point of this walk: whatever is gone is skipped.
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except (FileNotFoundError, ProcessLookupError):
            continue
        for task in tasks:
            try:
                queue.extend(int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
            except (FileNotFoundError, ProcessLookupError):
                continue
    return found


#: The programs of a database an application talks to (the kernel's 15-character comm); BeSim, the
#: specweb application's back end, names itself so (servers/apps/besim.py).
DATABASE_PROGRAMS = frozenset({"mariadbd", "mysqld", "besim"})


def backend_role(sample: ProcSample) -> str:
    """A process under a backend: the database, or the backend (a language's workers)."""
    return "database" if sample.comm in DATABASE_PROGRAMS else "backend"


def role(sample: ProcSample, root: ProcSample, has_children: bool) -> str:
    if sample.pid == root.pid:
        return "master" if has_children else "server"
    return "worker" if sample.comm == root.comm else "backend"

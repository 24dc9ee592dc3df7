"""What a fresh machine lacks, for .ci/fresh-machine to hide: the paths at which Gauntlet finds each
server, backend, application and peer load generator here, asked of the same finders `gauntlet
servers` and the environment snapshot use, so that a new driver or program is hidden too; and the
programs only the tests use (TEST_PROGRAMS).

Run as `python -m tests.helpers.fresh_machine`: one path a line, those not installed left out.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from types import ModuleType

from gauntlet import host
from gauntlet.servers import apps
from gauntlet.servers.backends import catalog
from gauntlet.servers.registry import KINDS
from tests.helpers.browser import CHROMIUM
from tests.live.prometheus import PROMETHEUS

#: The packages a fresh machine has: Gauntlet itself (the built-in server), Python and Node.js.
PRESENT = frozenset({"gauntlet", "python3", "nodejs"})
#: Programs only the tests use: the browser that opens the reports and the live page, the
#: Prometheus that scrapes --live. Hidden too, so their tests' skips are proven.
TEST_PROGRAMS = {"chromium": CHROMIUM, "prometheus": PROMETHEUS}


def programs(module: ModuleType) -> Iterator[tuple[str, Callable[[], str | None]]]:
    """(Debian package, finder) of every Program a module declares."""
    for value in vars(module).values():
        if isinstance(value, catalog.Program):
            yield value.package, value.find


def finders() -> Iterator[tuple[str, Callable[[], str | None]]]:
    yield from ((kind.package, kind.binary) for kind in KINDS.values())
    yield from programs(catalog)
    yield from programs(apps)
    for tool in host.TOOLS:
        yield tool, lambda tool=tool: shutil.which(tool)
    for package, path in TEST_PROGRAMS.items():
        yield package, lambda path=path: str(path) if os.access(path, os.X_OK) else None


def lacked() -> list[str]:
    """The installed paths of everything a fresh machine lacks."""
    found = {find() for package, find in finders() if package not in PRESENT}
    return sorted(path for path in found if path is not None)


if __name__ == "__main__":
    print("\n".join(lacked()))

"""WordPress in one server instance: the machine's seeded copy (apps/seed.py) hard-linked into the
instance's docroot with the lab's own wp-config.php, and the seeded database copied into the
instance's own MariaDB, started in its cgroup under its guard before the PHP backend and the server.

What the server's template needs is an `AppConfig`; the page types and their content markers
(`pages()`) are what a load checks each response against.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.apps import mariadb
from gauntlet.servers.apps.seed import FILES, render_wp_config, seed
from gauntlet.servers.base import BackendProcess, ServerInstance
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import LOOPBACK, http_get, log_tail, stop_processes
from gauntlet.servers.spec import ServerSpec

INDEX = "index.php"


@dataclass(frozen=True)
class Page:
    """A page type of the application: its URL path and a string only a correct page holds."""

    name: str
    path: str
    marker: str


@dataclass(frozen=True)
class AppConfig:
    """What a server's template needs: every `.php` file goes to the PHP backend; `index` is the
    directory index."""

    name: str
    index: str = INDEX


@dataclass
class PreparedApp:
    config: AppConfig
    #: The process the application asks for its data (MariaDB, BeSim): started before the server.
    service: BackendProcess
    #: Every config rendered for it (wp-config.php, mariadb.cnf), to keep with the result.
    config_text: str
    #: Seconds the copy of the seeded data directory took.
    copy_s: float


def pages() -> dict[str, Page]:
    """WordPress's page types, from the machine's seed: `home` (/) and `post` (/?p=1), each with its
    content marker. Builds the seed on first use."""
    return {name: Page(name, page["path"], page["marker"]) for name, page in seed().pages().items()}


def link_docroot(source: Path, docroot: Path) -> None:
    """Hard links to the seed's WordPress files (copies where the file system refuses links); the
    instance's own files (wp-config.php, the object cache) are written next to them."""
    for root, _, names in os.walk(source):
        target_dir = docroot / Path(root).relative_to(source)
        target_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
        for name in names:
            try:
                os.link(os.path.join(root, name), target_dir / name)
            except OSError:
                shutil.copyfile(os.path.join(root, name), target_dir / name)


def prepare_wordpress(spec: ServerSpec, premises: Premises, docroot: Path, timeout_s: float) -> PreparedApp:
    """Start the instance's MariaDB on a copy of the seeded data and put WordPress in the docroot."""
    found = seed()
    layout = mariadb.new_layout(premises.workdir, tcp=spec.database_socket == "tcp")
    started = time.monotonic()
    mariadb.copy_data_dir(found.data_dir, layout)
    copy_s = time.monotonic() - started
    database = mariadb.start_mariadb(layout, premises, timeout_s)
    try:
        link_docroot(found.docroot, docroot)
        db_host = f"localhost:{layout.socket_path}" if layout.port is None else f"{LOOPBACK}:{layout.port}"
        wp_config = render_wp_config(docroot, db_host)
        if spec.apcu:
            shutil.copyfile(FILES / "object-cache.php", docroot / "wp-content" / "object-cache.php")
    except BaseException:
        stop_processes(database.proc, sig=database.stop_signal)
        raise
    return PreparedApp(AppConfig("wordpress"), database, f"{wp_config}\n# ---- mariadb\n{database.config_text}", copy_s)


def check_app_pages(instance: ServerInstance, error_log: Path, checks: list[tuple[str, str]]) -> None:
    """One GET of each (path, marker): a page without its marker (a database error, the installer)
    fails the start with the logs, not the run."""
    for path, marker in checks:
        answer = http_get(instance.host, instance.port, path, tls=instance.scheme == "https", timeout_s=30.0)
        if answer is not None and answer[0] == 200 and marker.encode() in answer[1]:
            continue
        got = "no HTTP response" if answer is None else f"status {answer[0]} without its marker ({answer[1][:80]!r})"
        logs = "; ".join(
            f"{name}'s log ends: {log_tail(path)}"
            for name, path in [(instance.kind, instance.workdir / error_log), *((b.name, b.log_path) for b in instance.backends)]
        )
        raise GauntletError(f"{instance.kind} with {instance.spec.app} gave {got} for {path}; {logs}", "fix what the logs say")

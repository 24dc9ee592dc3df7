"""The seeded WordPress, built once per machine into a cache directory, the way the workload tree
is (servers/tree.py): WordPress's files with the lab's theme and the seed's images (hard-linked
into each instance's docroot), a MariaDB data directory holding the installed, seeded site (copied
into each instance) and the page types' content markers (seed.json).

The cache is named after everything that shapes it (the seed's version and sizes, the seed script,
the theme, the config templates, the WordPress and MariaDB versions), so a changed seed gets a
directory of its own. It is built whole under another name inside guarded premises (a killed build
leaves no mariadbd and no half cache) and renamed into place; the first rename wins.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gauntlet.engine import workload_files
from gauntlet.errors import GauntletError
from gauntlet.servers.apps import mariadb
from gauntlet.servers.apps.mariadb import WORDPRESS_DATABASE, Layout
from gauntlet.servers.base import TEMPLATES, find_binary, program_version
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import stop_processes

#: Change it when the seed changes in a way its files do not show.
SEED_VERSION = 1
POSTS = 50
COMMENTS_PER_POST = 5
WORDPRESS_DIR = Path("/usr/share/wordpress")
FILES = Path(__file__).parent / "wordpress"
#: The workload's images, attached to the posts in turn.
IMAGES = ("image_large.jpg", "image_10k.png", "image_small.gif")
SEED_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Seed:
    """The per-machine cache: docroot/ (WordPress), data/ (MariaDB) and seed.json (the pages)."""

    path: Path

    @property
    def docroot(self) -> Path:
        return self.path / "docroot"

    @property
    def data_dir(self) -> Path:
        return self.path / "data"

    def pages(self) -> dict[str, dict[str, str]]:
        """Page type -> {path, marker}."""
        pages: dict[str, dict[str, str]] = json.loads((self.path / "seed.json").read_text())["pages"]
        return pages


def wordpress_version() -> str:
    text = (WORDPRESS_DIR / "wp-includes" / "version.php").read_text()
    return text.split("$wp_version = '", 1)[1].split("'", 1)[0]


def _key() -> str:
    digest = hashlib.sha256(f"{SEED_VERSION} {POSTS} {COMMENTS_PER_POST} {IMAGES}".encode())
    for path in sorted(FILES.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(FILES)).encode() + path.read_bytes())
    for template in ("mariadb.cnf.j2", "wp-config.php.j2"):
        digest.update(TEMPLATES.loader.get_source(TEMPLATES, template)[0].encode())  # type: ignore[union-attr]
    digest.update(wordpress_version().encode())
    digest.update(program_version([mariadb._binary(mariadb.mariadbd_binary(), "mariadbd"), "--version"]).encode())
    return digest.hexdigest()[:12]


@cache
def seed() -> Seed:
    """The machine's seeded WordPress, built on first use (about a minute on two cores)."""
    target = Path(tempfile.gettempdir()) / f"gauntlet-wordpress-{_key()}"
    if (target / "seed.json").is_file():
        return Seed(target)
    premises = Premises.open("wordpress-seed")
    try:
        partial = premises.workdir / "seed"
        partial.mkdir(mode=0o755)
        _build(partial, premises)
        try:
            os.rename(partial, target)
        except OSError:
            if not (target / "seed.json").is_file():
                raise
    finally:
        premises.release()
    return Seed(target)


def copy_wordpress(docroot: Path) -> None:
    """Debian's WordPress, its symlinks resolved (the docroot must hold real files: WordPress finds
    its config next to itself), without Debian's wp-config.php, plus the lab's theme."""
    shutil.copytree(WORDPRESS_DIR, docroot, ignore=shutil.ignore_patterns("wp-config.php"))
    shutil.copytree(FILES / "theme", docroot / "wp-content" / "themes", dirs_exist_ok=True)
    (docroot / "wp-content" / "uploads").mkdir(mode=0o755, exist_ok=True)


def render_wp_config(docroot: Path, db_host: str) -> str:
    text = TEMPLATES.get_template("wp-config.php.j2").render(db=WORDPRESS_DATABASE, db_host=db_host)
    (docroot / "wp-config.php").write_text(text)
    return text


def _build(partial: Path, premises: Premises) -> None:
    docroot = partial / "docroot"
    copy_wordpress(docroot)
    images = premises.workdir / "images"
    images.mkdir()
    files = workload_files()
    for name in IMAGES:
        (images / name).write_bytes(files[name])
    layout = Layout(premises.workdir / "mariadb")
    layout.home.mkdir()
    mariadb.install_data_dir(layout, premises)
    database = mariadb.start_mariadb(layout, premises, timeout_s=60.0)
    try:
        mariadb.create_database(layout, WORDPRESS_DATABASE)
        render_wp_config(docroot, f"localhost:{layout.socket_path}")
        pages = _run_seed(docroot, images, premises)
    finally:
        stop_processes(database.proc, sig=database.stop_signal, grace_s=60.0)
    (docroot / "wp-config.php").unlink()
    shutil.move(layout.data_dir, partial / "data")
    (partial / "seed.json").write_text(pages)
    for root, dirs, names in os.walk(partial / "docroot"):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in names:
            os.chmod(os.path.join(root, name), 0o644)


def _run_seed(docroot: Path, images: Path, premises: Premises) -> str:
    """WordPress's installer and the seed, in the premises' cgroup (a killed build leaves nothing running)."""
    php = find_binary("php")  # as PHP_CLI finds it, which gauntlet checked before anything started
    if php is None:
        raise GauntletError("php (the command line) is not installed: the seed runs WordPress's installer with it", "install it: apt-get install php-cli")
    argv = [php, str(FILES / "seed.php"), str(docroot), str(images), str(POSTS), str(COMMENTS_PER_POST)]
    done = premises.run(argv, SEED_TIMEOUT_S)
    if done.returncode != 0 or not done.stdout.strip().startswith("{"):
        tail = " | ".join((done.stderr + done.stdout).strip().splitlines()[-3:])
        raise GauntletError(f"seeding WordPress failed (status {done.returncode}): {tail}", "fix what the seed says")
    return done.stdout.strip().splitlines()[-1]

"""MariaDB as a process of one instance, like a server: its own data directory, socket, config and
logs in the instance's work dir, started inside its cgroup and watched by its guard, never the
system's service or /var/lib/mysql. As root it runs as `mysql`, which owns its data directory.

The data directory is made once per machine (apps/seed.py) and copied into each instance: a data
directory that two servers could write cannot be shared or hard-linked.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.servers.base import TEMPLATES, BackendProcess, find_binary
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import LOOPBACK, accepts_connections, free_port, log_tail, spawn, stop_processes, wait_until

#: The instance's database lives in workdir/mariadb.
HOME = "mariadb"
BUFFER_POOL_MB = 64
MAX_CONNECTIONS = 500
#: The account WordPress uses: a lab database on loopback, reachable only through its socket or a
#: loopback port; nothing here is a secret.
DATABASE = "wordpress"
USER = "wordpress"
PASSWORD = "gauntlet-lab"


@dataclass(frozen=True)
class Database:
    name: str
    user: str
    password: str


WORDPRESS_DATABASE = Database(DATABASE, USER, PASSWORD)


def mariadbd_binary() -> str | None:
    return find_binary("mariadbd")


def install_db_binary() -> str | None:
    return find_binary("mariadb-install-db")


def client_binary() -> str | None:
    return find_binary("mariadb")


def _run_as() -> str | None:
    """mariadbd refuses to run as root: as root it runs as `mysql` (Debian's package makes it)."""
    return "mysql" if os.geteuid() == 0 else None


def _own(path: Path) -> None:
    """Give the tree to the user mariadbd runs as."""
    user = _run_as()
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for root, dirs, files in os.walk(path):
        os.chown(root, entry.pw_uid, entry.pw_gid)
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid, follow_symlinks=False)


@dataclass(frozen=True)
class Layout:
    """Where one MariaDB keeps everything: `home` holds its config, data, socket, logs and temp files."""

    home: Path
    #: A loopback TCP port, or None: the unix socket only (skip-networking).
    port: int | None = None

    @property
    def config_path(self) -> Path:
        return self.home / "mariadb.cnf"

    @property
    def socket_path(self) -> Path:
        return self.home / "mariadb.sock"

    @property
    def log_path(self) -> Path:
        return self.home / "error.log"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    def write_config(self) -> str:
        (self.home / "tmp").mkdir(parents=True, exist_ok=True)
        text = TEMPLATES.get_template("mariadb.cnf.j2").render(
            home=self.home,
            socket_path=self.socket_path,
            log_path=self.log_path,
            user=_run_as(),
            host=LOOPBACK,
            port=self.port,
            buffer_pool_mb=BUFFER_POOL_MB,
            max_connections=MAX_CONNECTIONS,
        )
        self.config_path.write_text(text)
        return text


def _binary(found: str | None, name: str) -> str:
    if found is None:
        raise GauntletError(f"{name} is not installed", "install it: apt-get install mariadb-server mariadb-client")
    return found


def install_data_dir(layout: Layout, premises: Premises, timeout_s: float = 120.0) -> None:
    """A fresh data directory (mariadb-install-db), inside the premises' cgroup so that its
    bootstrap server cannot outlive a killed Gauntlet."""
    layout.write_config()
    _own(layout.home)
    argv = [
        _binary(install_db_binary(), "mariadb-install-db"),
        f"--defaults-file={layout.config_path}",
        "--auth-root-authentication-method=socket",
        f"--auth-root-socket-user={pwd.getpwuid(os.geteuid()).pw_name}",
        "--skip-test-db",
    ]
    done = premises.run(argv, timeout_s, cwd=layout.home)
    if done.returncode != 0:
        lines = (done.stderr + done.stdout).strip().splitlines()
        # The first errors name the cause; the last ones only say that it aborted.
        said = [line for line in lines if "[ERROR]" in line][:3] or lines[-3:]
        raise GauntletError(f"mariadb-install-db failed: {' | '.join(said)}", "check that mariadb-server is installed and /tmp is writable")


def copy_data_dir(source: Path, layout: Layout) -> None:
    """The per-machine data directory, copied (never linked: the server writes to it)."""
    shutil.copytree(source, layout.data_dir, symlinks=True)


def start_mariadb(layout: Layout, premises: Premises, timeout_s: float) -> BackendProcess:
    """Start mariadbd on `layout` and return once its socket (and port, with TCP) accepts connections."""
    config_text = layout.write_config()
    _own(layout.home)
    argv = [_binary(mariadbd_binary(), "mariadbd"), f"--defaults-file={layout.config_path}"]
    proc = spawn(argv, cwd=layout.home, log_path=layout.home / "stderr.log", premises=premises)
    address: str | tuple[str, int] = str(layout.socket_path) if layout.port is None else (LOOPBACK, layout.port)
    try:
        wait_until(
            proc,
            lambda: accepts_connections(address),
            name="mariadbd",
            what=f"accept connections on {address}",
            deadline_s=timeout_s,
            log_path=layout.log_path,
        )
    except BaseException:
        stop_processes(proc, sig=signal.SIGTERM, grace_s=timeout_s)
        raise
    # SIGTERM: a clean shutdown (InnoDB flushes), so that a data directory can be kept afterwards.
    return BackendProcess("mariadb", proc, signal.SIGTERM, config_text, layout.log_path, layout.port)


def new_layout(workdir: Path, tcp: bool) -> Layout:
    home = workdir / HOME
    home.mkdir(mode=0o755)
    return Layout(home, free_port() if tcp else None)


def run_sql(layout: Layout, sql: str, timeout_s: float = 30.0) -> str:
    """Run statements as the database's root (unix-socket authentication); their output."""
    argv = [_binary(client_binary(), "mariadb"), "--no-defaults", f"--socket={layout.socket_path}", "-uroot", "-N", "-e", sql]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise GauntletError(
            f"mariadb could not run the lab's SQL: {done.stderr.strip()}; its log ends: {log_tail(layout.log_path)}",
            "fix what the log says",
        )
    return done.stdout


def create_database(layout: Layout, database: Database) -> None:
    """The application's database and its account, from the socket and from loopback TCP."""
    accounts = [f"'{database.user}'@'{host}'" for host in ("localhost", LOOPBACK)]
    run_sql(
        layout,
        f"CREATE DATABASE {database.name} CHARACTER SET utf8mb4;"
        + "".join(
            f"CREATE USER {account} IDENTIFIED BY '{database.password}';"
            f"GRANT ALL PRIVILEGES ON {database.name}.* TO {account};"
            for account in accounts
        ),
    )

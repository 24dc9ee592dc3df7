"""A truly read-only medium for a test: a command run in a private mount namespace where a directory is
bound read-only (as root, chmod does not stop writes; EROFS does). The mount lives and dies with the
command's namespace; nothing is left mounted. Skips with the reason where namespaces or mounts are not
permitted."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

#: sh: bind `$1` read-only on `$2`, then run the rest; 97 says the mount itself failed.
BIND_READ_ONLY = 'mount --bind -o ro "$1" "$2" || exit 97; shift 2; exec "$@"'
MOUNT_FAILED = 97


def _namespace(source: Path, mount_point: Path, argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", BIND_READ_ONLY, "sh", str(source), str(mount_point),
         *argv],
        capture_output=True, text=True, timeout=timeout_s,
    )


@functools.cache
def _not_permitted() -> str | None:
    """Why a read-only bind mount cannot be made here, or None."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    with tempfile.TemporaryDirectory() as scratch:
        source, point = Path(scratch, "source"), Path(scratch, "point")
        source.mkdir()
        point.mkdir()
        probe = _namespace(source, point, ["sh", "-c", f"! touch {point}/probe 2>/dev/null"], timeout_s=10)
    if probe.returncode != 0:
        return f"a read-only bind mount in a private mount namespace is not permitted here ({probe.stderr.strip()})"
    return None


def run_on_read_only_mount(source: Path, mount_point: Path, argv: list[str], timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    """`argv` run where `mount_point` shows `source` read-only; the test skips where that cannot be."""
    reason = _not_permitted()
    if reason is not None:
        pytest.skip(reason)
    mount_point.mkdir(exist_ok=True)
    done = _namespace(source, mount_point, argv, timeout_s)
    assert done.returncode != MOUNT_FAILED, done.stderr
    return done

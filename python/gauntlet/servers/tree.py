"""The workload tree in every server's docroot: written once per machine into a shared directory
(51 MB), then hard-linked into each instance's docroot, so a server start costs a few hundred
links, not 51 MB of writes."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from gauntlet import engine


def _cache_dir() -> Path:
    """Named after the tree's index, so a change of the file set gets a directory of its own."""
    index = repr(sorted((path, size) for path, size, _ in engine.tree_index())).encode()
    return Path(tempfile.gettempdir()) / f"gauntlet-tree-{hashlib.sha256(index).hexdigest()[:12]}"


def write_tree(root: Path) -> None:
    """The tree's files below `root` (root/tree/dir00/...), readable by everyone."""
    for path, body in engine.tree_files().items():
        target = root / path.lstrip("/")
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(body)
        target.chmod(0o644)


def tree_cache() -> Path:
    """The shared copy, written whole under another name and renamed, so that a reader never sees
    half of it (another process may write it at the same time; the first rename wins)."""
    cache = _cache_dir()
    if cache.is_dir():
        return cache
    partial = Path(tempfile.mkdtemp(prefix=cache.name + ".partial-", dir=cache.parent))
    try:
        partial.chmod(0o755)
        write_tree(partial)
        os.rename(partial, cache)
    except OSError:
        if not cache.is_dir():
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return cache


def link_tree(docroot: Path) -> None:
    """Hard links to the shared copy (a copy where the file system refuses links)."""
    cache = tree_cache()
    for source in cache.rglob("*.bin"):
        target = docroot / source.relative_to(cache)
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)

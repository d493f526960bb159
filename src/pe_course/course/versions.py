"""The version of an assignment's graders: a hash of its graders' files and its release's.

Every grading record stores the version that wrote it (``GradingRecord.graders_version``); the round
compares it to find the students a change of graders would regrade (:mod:`pe_course.round.regrade`).
Computed in the instructor's process and in each grading worker, from files only.
Its :func:`tree_digest` also names this package's code for a Dask worker (``runners.dask_worker``) and
keys the kept draws of the graders' strategies (``engine.draw_cache``).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


def graders_version(graders: Path, release: Path) -> str:
    """16 hex digits of a hash over the graders' files and the release's, by path relative to each
    (the same on a Dask worker, whose bundle holds the same files elsewhere)."""
    return tree_digest(("graders", graders, "*"), ("release", release, "*"))[:16]


def tree_digest(*trees: tuple[str, Path, str]) -> str:
    """A SHA-256 over the files of each ``(label, root, pattern)`` tree: every file's ``label/`` and name
    relative to its root, then its contents (caches and checkpoints left out; a missing root is empty).
    Hashed again only when a file is added, removed or changed (their sizes and times are listed)."""
    listing = tuple(
        (
            label,
            str(root),
            tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in _files(root, pattern)),
        )
        for label, root, pattern in trees
    )
    return _hash(listing)


@functools.lru_cache(maxsize=16)
def _hash(listing: tuple) -> str:
    digest = hashlib.sha256()
    for label, root, files in listing:
        for name, _, _ in files:
            path = Path(name)
            digest.update(f"{label}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def _files(root: Path, pattern: str) -> list[Path]:
    if not root.is_dir():
        return []
    skip = {"__pycache__", ".hypothesis", ".ipynb_checkpoints"}
    return sorted(p for p in root.rglob(pattern) if p.is_file() and not skip & set(p.relative_to(root).parts))

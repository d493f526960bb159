"""The version of an assignment's graders: a hash of its graders' files and its release's.

Every grading record stores the version that wrote it (``GradingRecord.graders_version``); the round
compares it to find the students a change of graders would regrade (:mod:`pe_course.round.regrade`).
Computed in the instructor's process and in each grading worker, from files only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from . import Course

_VERSIONS: dict[tuple, str] = {}


def graders_version(graders: Path, release: Path) -> str:
    """16 hex digits of a hash over the graders' files and the release's, by path relative to each
    (the same on a Dask worker, whose bundle holds the same files elsewhere); cached per listing."""
    trees = [(name, root, _files(root)) for name, root in (("graders", graders), ("release", release))]
    key = tuple((name, str(root), tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files))
                for name, root, files in trees)  # fmt: skip
    if key not in _VERSIONS:
        digest = hashlib.sha256()
        for name, root, files in trees:
            for path in files:
                digest.update(f"{name}/{path.relative_to(root)}\0".encode())
                digest.update(path.read_bytes())
                digest.update(b"\0")
        _VERSIONS.clear()  # one listing kept: a long-lived worker grades with one version at a time
        _VERSIONS[key] = digest.hexdigest()[:16]
    return _VERSIONS[key]


def _files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    skip = {"__pycache__", ".hypothesis", ".ipynb_checkpoints"}
    return sorted(p for p in root.rglob("*") if p.is_file() and not skip & set(p.relative_to(root).parts))


def course_graders_version(course: Course) -> str:
    return graders_version(course.graders, course.release)

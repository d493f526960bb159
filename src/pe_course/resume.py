"""Resumable grading: what was merged, so an interrupted round goes on and unchanged work is skipped.

``.pe-course/<assignment>-grade-state.json`` maps each student to the fingerprint of the submission
last merged into the gradebook; the fingerprint also covers the graders, the reference solutions and
this package, so changing any of them re-grades everyone.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .course import Course
from .record import atomic_write

STATE_FILE = "grade-state.json"


def _hash_tree(digest, root: Path) -> None:
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())


def graders_fingerprint(course: Course) -> str:
    """Changes when the graders, the reference solutions or this package change."""
    from . import __version__

    digest = hashlib.sha256(__version__.encode())
    _hash_tree(digest, course.graders)
    _hash_tree(digest, course.source)
    _hash_tree(digest, Path(__file__).parent)  # the whole package, sandbox/ included
    return digest.hexdigest()


def submission_fingerprint(course: Course, student: str, graders: str) -> str:
    digest = hashlib.sha256(graders.encode())
    _hash_tree(digest, course.submitted / student / course.assignment)
    return digest.hexdigest()


class GradeState:
    """``.pe-course/grade-state.json``: student -> fingerprint of the submission last merged."""

    def __init__(self, course: Course) -> None:
        self.path = course.state_dir / f"{course.assignment}-{STATE_FILE}"
        try:
            self.data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.data = {}

    def get(self, student: str) -> str | None:
        return self.data.get(student)

    def set(self, student: str, fingerprint: str | None) -> None:
        if fingerprint is None:
            self.data.pop(student, None)
        else:
            self.data[student] = fingerprint
        atomic_write(self.path, json.dumps(self.data, indent=1, sort_keys=True))

"""Resumable grading: what was merged, so an interrupted round goes on and unchanged work is skipped.

``.pe-course/<assignment>-grade-state.jsonl`` maps each student to the fingerprint of the submission
last merged into the gradebook; the fingerprint also covers the graders, the reference solutions and
this package, so changing any of them re-grades everyone. :func:`~pe_course.course.versions.graders_version`, a shorter hash of
the graders and the release alone, is stored in every record to say which graders wrote it (what a
regrade compares, :mod:`pe_course.round.regrade`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from ..course import Course
from ..record import atomic_write

STATE_FILE = "grade-state.jsonl"


def _hash_tree(digest, root: Path) -> None:
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())


def graders_fingerprint(course: Course) -> str:
    """Changes when the graders, the reference solutions or this package change."""
    from .. import __version__

    digest = hashlib.sha256(__version__.encode())
    _hash_tree(digest, course.graders)
    _hash_tree(digest, course.source)
    _hash_tree(digest, Path(__file__).parents[1])  # the whole package, sandbox/ included
    return digest.hexdigest()


def submission_fingerprint(course: Course, student: str, graders: str) -> str:
    digest = hashlib.sha256(graders.encode())
    _hash_tree(digest, course.submitted / student / course.assignment)
    return digest.hexdigest()


class GradeState:
    """``.pe-course/<assignment>-grade-state.jsonl``: student -> fingerprint of the submission last merged.

    One line is appended per change (``{"student": ..., "fingerprint": ...}``; the last line of a
    student wins), so recording a student costs the same in a class of 10 or of 10,000. The log is
    compacted once when a round opens it. A torn last line (the process killed while writing it) is
    ignored: that student is simply graded again. The state is written only after the gradebook
    commit, so it never claims a merge the gradebook does not have.
    """

    def __init__(self, course: Course, readonly: bool = False) -> None:
        self.path = course.state_dir / f"{course.assignment}-{STATE_FILE}"
        self.data: dict[str, str] = {}
        lines = 0
        legacy = self.path.with_suffix(".json")  # the whole-file format before the log
        if legacy.is_file():
            with contextlib.suppress(OSError, ValueError):
                self.data.update(json.loads(legacy.read_text(encoding="utf-8")))
        try:
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    lines += 1
                    try:
                        entry = json.loads(line)
                        student, fingerprint = entry["student"], entry["fingerprint"]
                    except (ValueError, KeyError, TypeError):
                        continue
                    if fingerprint is None:
                        self.data.pop(student, None)
                    else:
                        self.data[student] = fingerprint
        except OSError:
            pass
        if not readonly and (legacy.is_file() or lines > len(self.data)):  # a dry run writes nothing
            self._compact()
            legacy.unlink(missing_ok=True)

    def get(self, student: str) -> str | None:
        return self.data.get(student)

    def set(self, student: str, fingerprint: str | None) -> None:
        if self.data.get(student) == fingerprint:
            return
        if fingerprint is None:
            self.data.pop(student, None)
        else:
            self.data[student] = fingerprint
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(_line(student, fingerprint))

    def _compact(self) -> None:
        atomic_write(self.path, "".join(_line(s, f) for s, f in sorted(self.data.items())))


def _line(student: str, fingerprint: str | None) -> str:
    return json.dumps({"student": student, "fingerprint": fingerprint}, sort_keys=True) + "\n"


# --------------------------------------------------------------------------------------------
# A student's state: the gradebook's cells and the records
# --------------------------------------------------------------------------------------------

"""What a worker's private SQLite gradebook says about its one student, read as plain data: what the
single writer (:mod:`.writer`) merges into the course gradebook, and what a dry-run regrade compares."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass
class PrivateResult:
    """What one worker's private gradebook says about its student, as plain data."""

    student: dict[str, Any]  # first_name, last_name, email, lms_user_id
    timestamp: datetime | None
    penalties: dict[str, float | None] = field(default_factory=dict)  # notebook -> late penalty
    grades: dict[tuple[str, str], float | None] = field(
        default_factory=dict
    )  # (notebook, cell) -> auto score
    comments: dict[tuple[str, str], str | None] = field(
        default_factory=dict
    )  # (notebook, cell) -> auto comment


def read_private(path: Path, assignment: str, student: str) -> PrivateResult:
    """The student's submission in a worker's private SQLite gradebook.

    Read with plain SQL over nbgrader's tables (a new SQLAlchemy engine per file would cost more than
    the merge itself); the tests compare every merged grade with a serial ``nbgrader autograde``."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        who = db.execute(
            "SELECT first_name, last_name, email, lms_user_id FROM student WHERE id = ?", (student,)
        ).fetchone()
        sub = db.execute(
            "SELECT s.id, s.timestamp FROM submitted_assignment s JOIN assignment a ON s.assignment_id = a.id "
            "WHERE a.name = ? AND s.student_id = ?",
            (assignment, student),
        ).fetchone()
        if who is None or sub is None:
            raise LookupError(f"no submission of {student!r} in the worker's gradebook")
        stamp = datetime.fromisoformat(sub[1]) if sub[1] else None
        result = PrivateResult(
            dict(zip(("first_name", "last_name", "email", "lms_user_id"), who, strict=True)), stamp
        )
        result.penalties = dict(
            db.execute(
                "SELECT n.name, sn.late_submission_penalty FROM submitted_notebook sn "
                "JOIN notebook n ON sn.notebook_id = n.id WHERE sn.assignment_id = ?",
                (sub[0],),
            )
        )
        for table, column, out in (
            ("grade", "auto_score", result.grades),
            ("comment", "auto_comment", result.comments),
        ):
            rows = db.execute(
                f"SELECT n.name, c.name, g.{column} FROM {table} g "
                "JOIN submitted_notebook sn ON g.notebook_id = sn.id JOIN notebook n ON sn.notebook_id = n.id "
                "JOIN base_cell c ON g.cell_id = c.id WHERE sn.assignment_id = ?",
                (sub[0],),
            )
            out.update({(nb, cell): value for nb, cell, value in rows})
    return result

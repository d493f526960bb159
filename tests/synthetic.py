"""Synthetic grading results: what a worker sends back to the single writer, without grading anyone.

Used by ``tests/round/test_writer.py`` and ``bench/bench_writer.py``: a private gradebook holding one
student's submission with an auto score and comment for every cell (made once with nbgrader's API),
copied per student with the student's id changed, and the autograded folder (the released notebooks
and a ``.grading.json`` record each).
"""

from __future__ import annotations

import shutil
import sqlite3
import warnings
from pathlib import Path

from sqlalchemy.exc import SAWarning

from pe_course.course import Course
from pe_course.record import CellResult, CellStatus, GradingRecord
from pe_course.round.task import GradeOutcome, build_template

PROTOTYPE = "s000000"


def prototype(course: Course, work: Path) -> Path:
    """A private gradebook as a worker sends it back: the submission of PROTOTYPE, every cell scored."""
    db = build_template(course, work / "prototype.db")
    with warnings.catch_warnings(), course.gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own API trips SQLAlchemy's autoflush warning
        gb.update_or_create_student(PROTOTYPE, first_name="Sintetis", last_name="Mahasiswa")
        sub = gb.update_or_create_submission(course.assignment, PROTOTYPE, timestamp="2026-12-01 10:00:00")
        for nb in sub.notebooks:
            for grade in nb.grades:
                grade.auto_score = grade.max_score if grade.cell.cell_type == "code" else None
                grade.needs_manual_grade = grade.cell.cell_type != "code"
            for comment in nb.comments:
                comment.auto_comment = "Umpan balik otomatis."
        gb.db.commit()
    return db


def synthetic(course: Course, proto: Path, student: str, staging: Path) -> GradeOutcome:
    staging.mkdir(parents=True)  # a fresh staging folder per result, as a worker makes it
    db = staging / "gradebook.db"
    shutil.copy(proto, db)
    with sqlite3.connect(db) as con:  # the same submission, another student
        con.execute("PRAGMA foreign_keys = OFF")
        con.execute("UPDATE student SET id = ? WHERE id = ?", (student, PROTOTYPE))
        con.execute(
            "UPDATE submitted_assignment SET student_id = ? WHERE student_id = ?", (student, PROTOTYPE)
        )
    folder = staging / "autograded" / student / course.assignment
    folder.mkdir(parents=True)
    submitted = course.submitted / student / course.assignment
    submitted.mkdir(parents=True, exist_ok=True)
    for nb in sorted(course.release.glob("*.ipynb")):
        shutil.copy(nb, folder / nb.name)
        shutil.copy(nb, submitted / nb.name)
        cells = [CellResult("test_x", "x", 1.0, 1.0, CellStatus.OK)]
        record = GradingRecord(
            nb.stem, cells, "bubblewrap: synthetic", student=student, assignment=course.assignment
        )
        record.write(folder / f"{nb.stem}.grading.json")
    return GradeOutcome(student, True, str(staging), f"fingerprint-{student}")

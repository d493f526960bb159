"""What goes back to the LMS, read from nbgrader's gradebook: each student's final score (after the
late penalty, with the written answers' manual scores) or why there is none yet, and every graded
cell's points for the instructor's own analysis."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import MissingEntry

from .export import _cell, pending_manual_grades
from .roster import Table


class ExportError(ValueError):
    """The export cannot be built safely (message: one line)."""


@dataclass
class Filled:
    """An LMS's grades file filled in memory, before anything is written: the rows to write, what the
    instructor must know, the gradebook students found in it (by student id) and those the file
    itself marks late (Moodle's Status)."""

    table: Table
    notes: list[str]
    matched: set[str]
    late: set[str]


@dataclass(frozen=True)
class Final:
    student_id: str
    score: float | None  # None: nothing final to send (see why)
    max_score: float
    penalty: float = 0.0
    why: str = ""  # when score is None

    def scaled(self, points_possible: float | None) -> float | None:
        """The score on the LMS's scale (its points possible), rounded as the LMSs show it."""
        if self.score is None:
            return None
        if not points_possible or not self.max_score:
            return round(self.score, 2)
        return round(self.score * points_possible / self.max_score, 2)


def finals(gradebook, assignment: str) -> dict[str, Final]:
    """student id -> Final for every student in the gradebook."""
    out: dict[str, Final] = {}
    maximum = gradebook.find_assignment(assignment).max_score
    for student in gradebook.students:
        try:
            sub = gradebook.find_submission(assignment, student.id)
        except MissingEntry:
            out[student.id] = Final(student.id, None, maximum, why="no submission in the gradebook")
            continue
        pending = pending_manual_grades(sub)
        if pending:
            why = f"{pending} written answer(s) not graded yet (pe-course formgrader)"
            out[student.id] = Final(student.id, None, maximum, why=why)
            continue
        penalty = sub.late_submission_penalty or 0.0
        out[student.id] = Final(student.id, max(0.0, sub.score - penalty), maximum, penalty)
    return out


CELL_COLUMNS = ["student_id", "notebook", "cell", "kind", "score", "max_score", "needs_manual_grade"]


def write_cell_points(gradebook, assignment: str, path: Path) -> Path:
    """One row per student and graded cell: the class's points cell by cell (nbgrader#799)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(CELL_COLUMNS)
        for sub in sorted(gradebook.find_assignment(assignment).submissions, key=lambda s: s.student.id):
            for nb in sorted(sub.notebooks, key=lambda n: n.name):
                for grade in sorted(nb.grades, key=lambda g: g.name):
                    kind = "manual" if grade.cell.cell_type == "markdown" else "auto"
                    row = [sub.student.id, nb.name, grade.name, kind, grade.score, grade.max_score]
                    writer.writerow([_cell(v) for v in [*row, int(bool(grade.needs_manual_grade))]])
    return path


def number_text(value: float) -> str:
    """A score as both LMSs' importers read it: ``27``, ``27.5``, ``27.33`` (point as separator)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def number_of(text: str) -> float | None:
    """A number as an LMS export writes it (``35``, ``35.00``, ``35,5``), None if it is not one."""
    try:
        return float(text.strip().replace(",", "."))
    except ValueError:
        return None


def text_cell(text: str) -> str:
    """An identity cell written back: a name such as ``=HYPERLINK(…)`` never becomes a formula;
    Canvas's own ``="…"`` quoting is kept as Canvas wrote it."""
    if text.startswith('="') and text.endswith('"'):
        return text
    return _cell(text)


def class_zip(
    feedback_dir: Path, assignment: str, identities: dict, lms: str, name_of, dest: Path
) -> list[str]:
    """One zip of every student's feedback pages, each named by ``name_of(identity, page)`` as the
    LMS's bulk upload recognises it; the lines naming every student left out."""
    import zipfile

    notes: list[str] = []
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for sid, rec in sorted(identities.items()):
            if rec.lms != lms:
                continue
            folder = feedback_dir / sid / assignment
            pages = sorted(p for p in folder.glob("*.html") if p.is_file() and not p.is_symlink())
            if not pages:
                notes.append(f"{sid}: no feedback pages (run pe-course feedback): not in the zip")
            elif name_of(rec, pages[0]) is None:
                notes.append(f"{sid}: no {lms} user and attachment id (anonymous grading?): not in the zip")
            else:
                for page in pages:
                    zf.write(page, name_of(rec, page))
    tmp.replace(dest)
    return notes

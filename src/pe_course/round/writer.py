"""The round's single gradebook writer: each worker's result merged into the course gradebook.

Workers grade against private SQLite gradebooks; only this process writes the course gradebook
(``CourseDirectory.db_url``: SQLite or PostgreSQL). A result is first *staged*: read from the
worker's private gradebook as plain data, then applied to the open transaction of the course
gradebook with a handful of queries (nbgrader's models, not its one-call-per-cell API, which commits
after every change). :meth:`GradebookWriter.commit` then commits every staged student together —
several students per transaction, as many as are ready — and only then moves their autograded files
into place. It stays all or nothing per student: a batch whose commit fails is rolled back and
committed again one student at a time, so a bad result fails alone. With ``previous`` (a regrade, see
:mod:`pe_course.round.regrade`) the records a student's new folder replaces are kept in ``previous/<student>/``.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..course import Course
from .private_result import PrivateResult, read_private

MAX_BATCH = 200  # students per transaction at most (a commit also happens whenever nothing else is ready)


@dataclass
class Staged:
    outcome: Any  # a round.task.GradeOutcome
    data: PrivateResult
    inserts: dict[str, list[dict]] = field(default_factory=dict)  # a new submission's rows, per table
    manual: bool = False  # the course gradebook already had manual scores for this student


class GradebookWriter:
    """The course gradebook, opened once for the round; students staged, then committed in batches."""

    def __init__(self, course: Course, max_batch: int = MAX_BATCH, previous: Path | None = None) -> None:
        self.course = course
        self.previous = previous
        self.max_batch = max_batch
        self.main = course.gradebook()
        self.assignment = self.main.find_assignment(course.assignment)
        self.assignment_id = self.assignment.id
        self.pending: list[Staged] = []
        self._cells: list | None = None

    def __enter__(self) -> GradebookWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.main.db.rollback()  # whatever was staged and not committed
        self.main.close()

    @property
    def full(self) -> bool:
        return len(self.pending) >= self.max_batch

    def stage(self, outcome) -> None:
        """Read one worker's result and apply it to the open transaction (not committed yet).

        Raises when the result cannot be merged; the students staged before stay staged."""
        data = read_private(Path(outcome.staging) / "gradebook.db", self.course.assignment, outcome.student)
        try:
            inserts, manual = self._apply(outcome.student, data)
        except BaseException:
            self._rebuild()  # the transaction may be unusable: start it again without this student
            raise
        self.pending.append(Staged(outcome, data, inserts, manual))

    def commit(self) -> tuple[list, dict[str, str]]:
        """Commit the staged students and move their files into place: (merged outcomes, failed student -> why)."""
        staged, self.pending = self.pending, []
        if not staged:
            return [], {}
        failed: dict[str, str] = {}
        try:
            self._insert(staged)
            self.main.db.commit()
            merged = staged
        except Exception:  # noqa: BLE001 (one bad student: commit them one by one, it fails alone)
            self.main.db.rollback()
            merged = []
            for item in staged:
                try:
                    item.inserts, item.manual = self._apply(item.outcome.student, item.data)
                    self._insert([item])
                    self.main.db.commit()
                    merged.append(item)
                except Exception as exc:  # noqa: BLE001
                    self.main.db.rollback()
                    failed[item.outcome.student] = f"could not write the gradebook: {exc}"
        for item in merged:
            if item.manual:  # the worker's pages lack the manual scores given before: made again here
                item.outcome.feedback = False
            self._move_files(item.outcome)
        return [item.outcome for item in merged], failed

    # -- inside the transaction ------------------------------------------------------------------
    def _rebuild(self) -> None:
        self.main.db.rollback()
        for item in self.pending:
            item.inserts, item.manual = self._apply(item.outcome.student, item.data)

    def _insert(self, staged: list[Staged]) -> None:
        """The new submissions' rows, one statement per table for the whole batch (parents first)."""
        from nbgrader.api import Comment, Grade, SubmittedAssignment, SubmittedNotebook

        self.main.db.flush()  # new students first: the submissions refer to them
        for model in (SubmittedAssignment, SubmittedNotebook, Grade, Comment):
            rows = [row for item in staged for row in item.inserts.get(model.__tablename__, [])]
            if rows:
                self.main.db.execute(model.__table__.insert(), rows)

    def _apply(self, student: str, data: PrivateResult) -> tuple[dict[str, list[dict]], bool]:
        """Stage one student: update an existing submission in the session, or return the rows of a
        new one (inserted by :meth:`_insert` with the batch); and whether the course gradebook already
        had manual scores for the student."""
        from nbgrader.api import BaseCell, Comment, Grade, Notebook, Student, SubmittedAssignment
        from nbgrader.api import SubmittedNotebook as SubNb
        from sqlalchemy import update

        db = self.main.db
        with db.no_autoflush:
            who = db.get(Student, student)
            if who is None:
                who = Student(id=student)
                db.add(who)
            for attribute, value in data.student.items():
                setattr(who, attribute, value)
            sub = (
                db.query(SubmittedAssignment)
                .filter_by(assignment_id=self.assignment_id, student_id=student)
                .one_or_none()
            )
            if sub is None:  # the usual case: created with its values, inserted at the commit
                return self._new_submission(student, data), False
            sub.timestamp = data.timestamp
            penalties = [
                {"id": nb_id, "late_submission_penalty": data.penalties[name]}
                for nb_id, name in db.query(SubNb.id, Notebook.name)
                .join(Notebook, SubNb.notebook_id == Notebook.id)
                .filter(SubNb.assignment_id == sub.id)
                if name in data.penalties
            ]
            grades: list[dict] = []
            comments: list[dict] = []
            manual = False
            seen: set[tuple[str, tuple[str, str]]] = set()
            for model, values, out in ((Grade, data.grades, grades), (Comment, data.comments, comments)):
                rows = (
                    db.query(
                        model.id,
                        Notebook.name,
                        BaseCell.name,
                        *([Grade.manual_score] if model is Grade else []),
                    )
                    .join(SubNb, model.notebook_id == SubNb.id)
                    .join(Notebook, SubNb.notebook_id == Notebook.id)
                    .join(BaseCell, model.cell_id == BaseCell.id)
                    .filter(SubNb.assignment_id == sub.id)
                )
                for row in rows:
                    key = (row[1], row[2])
                    if key not in values:
                        continue
                    seen.add((model.__name__, key))
                    if model is Grade:
                        manual = manual or row[3] is not None
                        score = values[key]
                        # as SaveAutoGrades: a manual score given earlier still needs a look
                        out.append(
                            {
                                "id": row[0],
                                "auto_score": score,
                                "needs_manual_grade": row[3] is not None or score is None,
                            }
                        )
                    else:
                        out.append({"id": row[0], "auto_comment": values[key]})
            missing = [k for k in data.grades if ("Grade", k) not in seen]
            missing += [k for k in data.comments if ("Comment", k) not in seen]
            if missing:
                raise LookupError(f"cells unknown to the course gradebook: {missing[:5]}")
            for model, params in ((SubNb, penalties), (Grade, grades), (Comment, comments)):
                if params:
                    db.execute(update(model), params)  # bulk UPDATE by primary key
        return {}, manual

    def _new_submission(self, student: str, data: PrivateResult) -> dict[str, list[dict]]:
        """The rows of a new submission: every notebook, grade and comment of the assignment, as
        nbgrader's ``Gradebook.add_submission`` makes them, with this result's values."""
        sub_id = uuid.uuid4().hex
        rows: dict[str, list[dict]] = {
            "submitted_assignment": [
                {
                    "id": sub_id,
                    "assignment_id": self.assignment_id,
                    "student_id": student,
                    "timestamp": data.timestamp,
                }
            ],
            "submitted_notebook": [],
            "grade": [],
            "comment": [],
        }
        used = 0
        for notebook_id, notebook, cells in self._structure():
            nb_id = uuid.uuid4().hex
            rows["submitted_notebook"].append(
                {
                    "id": nb_id,
                    "assignment_id": sub_id,
                    "notebook_id": notebook_id,
                    "late_submission_penalty": data.penalties.get(notebook),
                    "flagged": False,
                }
            )
            for cell_id, cell, kind in cells:
                key = (notebook, cell)
                if kind in ("grade", "task"):
                    score = data.grades.get(key)
                    used += key in data.grades
                    rows["grade"].append(
                        {
                            "id": uuid.uuid4().hex,
                            "notebook_id": nb_id,
                            "cell_id": cell_id,
                            "auto_score": score,
                            "manual_score": None,
                            "extra_credit": None,
                            "needs_manual_grade": score is None,
                        }
                    )
                if kind in ("solution", "task"):
                    used += key in data.comments
                    rows["comment"].append(
                        {
                            "id": uuid.uuid4().hex,
                            "notebook_id": nb_id,
                            "cell_id": cell_id,
                            "auto_comment": data.comments.get(key),
                            "manual_comment": None,
                        }
                    )
        if used != len(data.grades) + len(data.comments):
            known = {(nb, cell) for _, nb, cells in self._structure() for _, cell, _ in cells}
            missing = [k for k in [*data.grades, *data.comments] if k not in known]
            raise LookupError(f"cells unknown to the course gradebook: {missing[:5]}")
        return rows

    def _structure(self) -> list:
        """(notebook id, name, [(cell id, cell name, kind)]) of the assignment, read once (kind: grade,
        solution or task)."""
        if self._cells is None:
            self._cells = [
                (
                    notebook.id,
                    notebook.name,
                    [(c.id, c.name, "grade") for c in notebook.grade_cells]
                    + [(c.id, c.name, "solution") for c in notebook.solution_cells]
                    + [(c.id, c.name, "task") for c in notebook.task_cells],
                )
                for notebook in self.assignment.notebooks
            ]
        return self._cells

    # -- after the commit -------------------------------------------------------------------------
    def _move_files(self, outcome) -> None:
        course, staging = self.course, Path(outcome.staging)
        keep = self.previous / outcome.student if self.previous is not None else None
        _replace(
            staging / "autograded" / outcome.student / course.assignment,
            course.autograded / outcome.student,
            keep,
        )
        pages = staging / "feedback" / outcome.student / course.assignment
        if outcome.feedback and pages.is_dir():
            _replace(pages, course.feedback / outcome.student)
        else:
            outcome.feedback = False


def _replace(folder: Path, parent: Path, keep: Path | None = None) -> None:
    """Move ``folder`` to ``parent/<its name>``, replacing what was there (never half of each); the
    replaced ``.grading.json`` records are moved into ``keep`` when given."""
    target = parent / folder.name
    parent.mkdir(parents=True, exist_ok=True)
    old = target.with_name(f".{folder.name}.old-{uuid.uuid4().hex[:8]}")
    if target.exists():
        target.rename(old)
    folder.rename(target)
    if keep is not None and old.is_dir():
        records = sorted(old.glob("*.grading.json"))
        if records:
            keep.mkdir(parents=True, exist_ok=True)
            for record in records:
                record.rename(keep / record.name)
    shutil.rmtree(old, ignore_errors=True)

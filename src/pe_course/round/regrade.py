"""A regrade is a comparison: what changed, for whom, and why, when students graded before are graded again.

- every record stores the graders that wrote it (``GradingRecord.graders_version``, a hash of the
  assignment's graders and its release: :func:`pe_course.course.versions.graders_version`);
- :class:`Regrade`: a round's before and after. At the start it reads every chosen student's state (the
  gradebook's cells, auto and manual scores, and the ``.grading.json`` records); the round's single writer
  moves each replaced record into ``regrades/<assignment>/<stamp>/previous/<student>/`` as it puts the new
  one in place (:class:`pe_course.round.writer.GradebookWriter`); at the end, :meth:`Regrade.compare` gives the
  :class:`~pe_course.round.regrade_report.RegradeReport`: per student old -> new score and, per clause, the check,
  the input and the old and new verdict; manual scores (written answers, overrides) shown as kept. Each
  changed record gets what changed (``GradingRecord.regrade``), which its feedback page shows the student
  (:mod:`pe_course.steps.regrade_notice`).
- A dry run (``pe-course grade --dry-run``) compares the same way with what the workers left in their
  staging folders (records and private gradebooks), and writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..course import Course
from ..course.versions import graders_version
from ..record import ClauseResult, GradingRecord, atomic_write
from .private_result import read_private
from .regrade_report import ClauseChange, RegradeReport, StudentChange

REGRADES = "regrades"


@dataclass
class Cell:
    """One graded cell of a student in the gradebook."""

    auto: float | None
    manual: float | None
    extra: float | None
    max_score: float
    written: bool  # a markdown answer (graded by hand), not a test cell

    @property
    def score(self) -> float:
        """As nbgrader counts it: the manual score when there is one, else the auto score."""
        base = self.manual if self.manual is not None else self.auto
        return 0.0 if base is None else base + (self.extra or 0.0)


@dataclass
class State:
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)  # (notebook, cell name) -> grade
    records: dict[str, GradingRecord] = field(default_factory=dict)  # notebook -> record

    @property
    def total(self) -> float:
        return round(sum(c.score for c in self.cells.values()), 6)

    def notebook_score(self, notebook: str) -> float:
        return round(sum(c.score for (nb, _), c in self.cells.items() if nb == notebook), 6)

    @property
    def versions(self) -> list[str]:
        return sorted({r.graders_version or "unknown" for r in self.records.values()})


def gradebook_cells(course: Course, students: set[str] | None = None) -> dict[str, dict]:
    """student -> (notebook, cell) -> :class:`Cell`, for every submission of the assignment (one query)."""
    from nbgrader.api import Assignment, BaseCell, Grade, Notebook, SubmittedAssignment, SubmittedNotebook

    found: dict[str, dict] = {}
    with course.gradebook() as gb:
        rows = (
            gb.db.query(
                SubmittedAssignment.student_id,
                Notebook.name,
                BaseCell.name,
                Grade.auto_score,
                Grade.manual_score,
                Grade.extra_credit,
                Grade.max_score,
                Grade.cell_type,
            )
            .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
            .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
            .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
            .join(BaseCell, Grade.cell_id == BaseCell.id)
            .filter(Assignment.name == course.assignment)
        )
        for student, notebook, cell, auto, manual, extra, max_score, kind in rows:
            if students is None or student in students:
                found.setdefault(student, {})[(notebook, cell)] = Cell(
                    auto, manual, extra, float(max_score or 0.0), kind != "code"
                )
        gb.db.rollback()  # read only
    return found


def records_in(folder: Path) -> dict[str, GradingRecord]:
    """notebook -> record, for the ``.grading.json`` records readable in ``folder``."""
    out = {}
    for path in sorted(folder.glob("*.grading.json")) if folder.is_dir() else []:
        try:
            out[path.name.removesuffix(".grading.json")] = GradingRecord.read(path)
        except (OSError, ValueError):
            continue
    return out


# --------------------------------------------------------------------------------------------
# A round's before and after
# --------------------------------------------------------------------------------------------
class Regrade:
    """Before and after of one grading round (see the module docstring)."""

    def __init__(self, course: Course, dry_run: bool = False) -> None:
        self.course = course
        self.dry_run = dry_run
        self.started = datetime.now(timezone.utc)
        self.version = graders_version(course.graders, course.release)
        stamp = self.started.strftime("%Y%m%dT%H%M%S%fZ")
        self.folder = course.root / REGRADES / course.assignment / stamp
        self.cells = gradebook_cells(course)
        self.class_before = {s: State(cells).total for s, cells in self.cells.items()}
        self.before: dict[str, State] = {}

    def remember(self, student: str) -> None:
        """Read the state of a student about to be graded (their records are read only then)."""
        records = records_in(self.course.autograded / student / self.course.assignment)
        if student in self.cells or records:
            self.before[student] = State(self.cells.get(student, {}), records)

    @property
    def previous(self) -> Path:
        """Where the writer keeps the records it replaces: ``previous/<student>/``."""
        return self.folder / "previous"

    def after_merge(self, students: list[str]) -> dict[str, State]:
        """The state of ``students`` once merged: the course gradebook and the records in place."""
        cells = gradebook_cells(self.course, set(students))
        folder = self.course.autograded
        return {s: State(cells.get(s, {}), records_in(folder / s / self.course.assignment)) for s in students}

    def after_staging(self, student: str, staging: Path) -> State:
        """A dry run's state of ``student``: the worker's records and auto scores, with the manual scores
        of the course gradebook (which a real merge keeps)."""
        data = read_private(staging / "gradebook.db", self.course.assignment, student)
        before = self.before.get(student, State())
        cells = {}
        for key, auto in data.grades.items():
            old = before.cells.get(key)
            if old is None:
                cells[key] = Cell(auto, None, None, 0.0, auto is None)
            else:
                cells[key] = Cell(auto, old.manual, old.extra, old.max_score, old.written)
        records = records_in(staging / "autograded" / student / self.course.assignment)
        return State(cells, records)

    def compare(self, after: dict[str, State], failed: dict[str, str] | None = None) -> RegradeReport:
        """The report of this round: ``after`` holds every student graded in it."""
        report = RegradeReport(
            assignment=self.course.assignment,
            date=self.started.isoformat(timespec="seconds"),
            graders_version=self.version,
            dry_run=self.dry_run,
            folder=str(self.folder.relative_to(self.course.root)),
        )
        for student in sorted(after):
            if student not in self.before:
                report.first_graded.append(student)
                continue
            change = compare_student(student, self.before[student], after[student])
            if change.kept:
                report.kept[student] = change.kept
            report.previous_versions = sorted({*report.previous_versions, *self.before[student].versions})
            if change.score_changed or change.clauses:
                report.students.append(change)
            else:
                report.unchanged.append(student)
        report.failed = sorted(failed or {})
        class_after = {**self.class_before, **{s: state.total for s, state in after.items()}}
        report.before = sorted(self.class_before.values())
        report.after = sorted(class_after.values())
        return report

    def keep(self, report: RegradeReport, after: dict[str, State]) -> list[str]:
        """After a real round: each changed record says what changed (for the student's page), and the
        report is written beside the records it replaced. The students whose pages must be made again."""
        if not report.regraded:
            return []
        for change in report.students:
            for notebook in after[change.student].records:
                regrade = change.for_notebook(notebook, report.date)
                if regrade is None:
                    continue
                path = (
                    self.course.autograded
                    / change.student
                    / self.course.assignment
                    / f"{notebook}.grading.json"
                )
                data = json.loads(path.read_text(encoding="utf-8"))  # the record as written, only this added
                data["regrade"] = regrade
                atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False))
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / "regrade.json", json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        atomic_write(self.folder / "regrade.md", report.markdown())
        return [change.student for change in report.students]


def compare_student(student: str, before: State, after: State) -> StudentChange:
    change = StudentChange(
        student,
        before.total,
        after.total,
        old_versions=before.versions,
        new_versions=after.versions,
    )
    for notebook in sorted(
        {nb for nb, _ in before.cells} | {nb for nb, _ in after.cells} | set(after.records)
    ):
        old_score, new_score = before.notebook_score(notebook), after.notebook_score(notebook)
        if old_score != new_score:
            change.notebooks[notebook] = [old_score, new_score]
        change.clauses += _clause_changes(notebook, before.records.get(notebook), after.records.get(notebook))
    for (notebook, cell), old in sorted(before.cells.items()):
        new = after.cells.get((notebook, cell))
        if old.manual is not None and new is not None and new.manual == old.manual:
            auto_changed = old.auto != new.auto
            change.kept.append(
                {
                    "notebook": notebook,
                    "cell": cell,
                    "manual": old.manual,
                    "written": old.written,
                    "auto_changed": auto_changed,
                }
            )
    return change


def _clause_changes(
    notebook: str, old: GradingRecord | None, new: GradingRecord | None
) -> list[ClauseChange]:
    changes: list[ClauseChange] = []
    old_cells = {c.grade_id: c for c in (old.cells if old else [])}
    new_cells = {c.grade_id: c for c in (new.cells if new else [])}
    for gid in sorted(set(old_cells) | set(new_cells)):
        o, n = old_cells.get(gid), new_cells.get(gid)
        function = (n or o).function  # type: ignore[union-attr]
        old_clauses = {c.clause: c for c in (o.clauses if o else [])}
        new_clauses = {c.clause: c for c in (n.clauses if n else [])}
        for key in sorted(set(old_clauses) | set(new_clauses)):
            a, b = old_clauses.get(key), new_clauses.get(key)
            if _verdict(a) == _verdict(b):
                continue
            either = b or a
            assert either is not None
            changes.append(
                ClauseChange(
                    notebook=notebook,
                    cell=gid,
                    function=function,
                    clause=key,
                    text=either.text,
                    checks=sorted({*(a.checks if a else []), *(b.checks if b else [])}),
                    input=(b.input if b and not b.passed else "") or (a.input if a else ""),
                    old=_verdict_dict(a),
                    new=_verdict_dict(b),
                )
            )
        if o and n and (o.status != n.status) and not any(c.cell == gid for c in changes):
            changes.append(
                ClauseChange(
                    notebook,
                    gid,
                    function,
                    "",
                    "",
                    [],
                    "",
                    {"status": str(o.status)},
                    {"status": str(n.status)},
                )  # fmt: skip
            )
    return changes


def _verdict(c: ClauseResult | None) -> tuple:
    if c is None:
        return ()
    return (c.passed, round(c.points, 6), round(c.max_points, 6), c.input, c.message)


def _verdict_dict(c: ClauseResult | None) -> dict[str, Any]:
    if c is None:
        return {}
    return {
        "passed": c.passed,
        "points": c.points,
        "max_points": c.max_points,
        "input": c.input,
        "message": c.message,
    }


def history(course: Course) -> list[RegradeReport]:
    """Every regrade of the assignment written so far, oldest first."""
    out = []
    for path in sorted((course.root / REGRADES / course.assignment).glob("*/regrade.json")):
        try:
            out.append(RegradeReport.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return out


def latest_changed(course: Course) -> list[str] | None:
    """The students the latest regrade changed (None when there was none): every round with the latest
    graders' version, so a regrade interrupted and then resumed counts as one."""
    found = history(course)
    if not found:
        return None
    latest = found[-1].graders_version
    return sorted({s.student for r in found if r.graders_version == latest for s in r.students})

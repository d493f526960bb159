"""What the report shows, as plain data: the students, their cells and clauses, the misconceptions found,
and who needs a look (filled by :mod:`.collect`, drawn by :mod:`.plots`, written by :mod:`.render`).

Everything taken from a submission or a record is untrusted: it is kept as plain text here and escaped by
the template.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from ..record import NoteKind

EPS = 1e-9
TAMPERING = NoteKind.SUSPECTED_TAMPERING.value


@dataclass
class Issue:
    """Why a student needs a look (one line of the attention table)."""

    student: str
    notebook: str  # "" when it concerns the whole assignment
    kind: str  # a kind of pe_course.record.outcomes.OUTCOMES
    detail: str = ""


@dataclass
class StudentReport:
    student: str
    scores: dict[str, float]  # notebook -> score in the gradebook
    raw_total: float
    penalty: float
    cell_scores: dict[tuple[str, str], float] = field(default_factory=dict)  # (notebook, grade id) -> score
    missing: list[str] = field(default_factory=list)  # notebooks not submitted
    manual: list[tuple[str, str]] = field(default_factory=list)  # (notebook, grade id) needing a manual grade
    issues: list[Issue] = field(default_factory=list)

    @property
    def total(self) -> float:
        """The final score, as nbgrader's export computes it (late penalty applied, never below 0)."""
        return max(0.0, self.raw_total - self.penalty)


@dataclass
class CellStat:
    """An autograded test cell over the students who submitted its notebook."""

    notebook: str
    grade_id: str
    max_score: float
    scores: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)  # record status -> students

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def full(self) -> int:
        return sum(1 for s in self.scores if s >= self.max_score - EPS)

    @property
    def pass_rate(self) -> float | None:
        """Share of students with full marks on the cell."""
        return self.full / self.n if self.n else None

    @property
    def mean_fraction(self) -> float | None:
        if not self.n or self.max_score <= 0:
            return None
        return sum(self.scores) / self.n / self.max_score


@dataclass
class ClauseStat:
    """One clause (K1, K2, … of a function's "Ketentuan yang dinilai") of a test cell, from the
    .grading.json records: the unit of credit, all or nothing, so a student either kept it or lost it."""

    notebook: str
    grade_id: str
    clause: str  # "K2"
    text: str  # as the notebook states it (Indonesian), from the records
    max_points: float
    submitted: int = 0  # students who submitted the notebook: the share's denominator
    graded: int = 0  # of them, grading records that carry the clause
    students: list[str] = field(default_factory=list)  # who lost it
    messages: Counter = field(default_factory=Counter)  # failure message charged here -> students
    inputs: Counter = field(default_factory=Counter)  # failing input -> students
    found_by: Counter = field(default_factory=Counter)  # check name -> students whose failure here it found

    @property
    def lost(self) -> int:
        return len(self.students)

    @property
    def lost_share(self) -> float | None:
        """Share of the students who submitted the notebook that lost the clause."""
        return self.lost / self.submitted if self.submitted else None

    @property
    def sort_key(self) -> tuple[int, str]:
        """K2 before K10."""
        digits = re.search(r"\d+", self.clause)
        return (int(digits.group()) if digits else 10**6, self.clause)


@dataclass
class MisconceptionStat:
    function: str
    id: str
    hint: str | None  # as the records give it; None: no record kept one
    students: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass
class ReportData:
    assignment: str
    generated: datetime
    duedate: datetime | None
    notebooks: list[str]
    notebook_max: dict[str, float]
    students: list[StudentReport]
    cells: list[CellStat]
    clauses: list[ClauseStat]  # in the order the records name them
    misconceptions: list[MisconceptionStat]  # most frequent first
    no_submission: list[str] = field(default_factory=list)  # in the gradebook, no submission
    not_graded: list[str] = field(default_factory=list)  # in submitted/, not in the gradebook

    @property
    def max_total(self) -> float:
        return sum(self.notebook_max.values())

    @property
    def totals(self) -> list[float]:
        return [s.total for s in self.students]

    @property
    def mean_total(self) -> float | None:
        return statistics.fmean(self.totals) if self.students else None

    @property
    def median_total(self) -> float | None:
        return statistics.median(self.totals) if self.students else None

    @property
    def manual(self) -> list[tuple[str, str, str]]:
        """(student, notebook, grade id) of every grade that needs a manual grade."""
        return [(s.student, nb, gid) for s in self.students for nb, gid in s.manual]

    @property
    def issues(self) -> list[Issue]:
        extra = [Issue(s, "", "no-submission") for s in self.no_submission]
        extra += [Issue(s, "", "not-graded") for s in self.not_graded]
        return sorted(
            [i for s in self.students for i in s.issues] + extra, key=lambda i: (i.student, i.notebook)
        )

    def student(self, student_id: str) -> StudentReport | None:
        return next((s for s in self.students if s.student == student_id), None)

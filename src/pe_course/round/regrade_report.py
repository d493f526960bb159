"""The regrade report: one typed object (``regrade.json``), read by the terminal summary, the markdown
record (``regrade.md``), the students' feedback notice, ``pe-course export --changed-only`` and
``pe-course report``'s history."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ClauseChange:
    """One clause whose verdict changed (or whose failing input or message did)."""

    notebook: str
    cell: str  # grade_id, test_<function>
    function: str
    clause: str  # "K2"; "" for a change of the cell's status only
    text: str
    checks: list[str]  # the checks charged to it, before or after
    input: str  # the failing input (now, else before)
    old: dict[str, Any]  # passed, points, max_points, input, message ({} when there was no such clause)
    new: dict[str, Any]

    def verdict(self, side: dict[str, Any]) -> str:
        if not side:
            return "absent"
        if "status" in side:
            return str(side["status"])
        word = "passed" if side.get("passed") else "failed"
        return f"{word} {side.get('points', 0):g}/{side.get('max_points', 0):g}"

    @property
    def delta(self) -> float:
        return round(float(self.new.get("points", 0) or 0) - float(self.old.get("points", 0) or 0), 6)


@dataclass
class StudentChange:
    student: str
    old_score: float
    new_score: float
    clauses: list[ClauseChange] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(
        default_factory=list
    )  # manual scores kept: notebook, cell, manual, ...
    notebooks: dict[str, list[float]] = field(default_factory=dict)  # notebook -> [old, new] when it changed
    old_versions: list[str] = field(default_factory=list)
    new_versions: list[str] = field(default_factory=list)

    @property
    def score_changed(self) -> bool:
        return self.old_score != self.new_score

    def for_notebook(self, notebook: str, date: str) -> dict[str, Any] | None:
        """What the student's page of ``notebook`` says changed (None when nothing did there)."""
        clauses = [c for c in self.clauses if c.notebook == notebook]
        if not clauses and notebook not in self.notebooks:
            return None
        old, new = self.notebooks.get(notebook, [None, None])
        return {
            "date": date,
            "old_score": old,
            "new_score": new,
            "old_versions": self.old_versions,
            "new_versions": self.new_versions,
            "clauses": [asdict(c) for c in clauses],
            "kept": [k for k in self.kept if k["notebook"] == notebook],
        }


@dataclass
class RegradeReport:
    assignment: str
    date: str
    graders_version: str
    dry_run: bool = False
    folder: str = ""
    previous_versions: list[str] = field(default_factory=list)
    students: list[StudentChange] = field(default_factory=list)  # changed (score, or a clause's verdict)
    unchanged: list[str] = field(default_factory=list)
    first_graded: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    kept: dict[str, list[dict[str, Any]]] = field(
        default_factory=dict
    )  # every regraded student's manual scores
    before: list[float] = field(default_factory=list)  # the class's totals before the round
    after: list[float] = field(default_factory=list)  # and after it

    @property
    def regraded(self) -> bool:
        """Whether any student graded before was graded again in this round."""
        return bool(self.students or self.unchanged)

    @property
    def score_changes(self) -> list[StudentChange]:
        return [s for s in self.students if s.score_changed]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RegradeReport:
        students = []
        for s in data.get("students", []):
            clauses = [ClauseChange(**c) for c in s.get("clauses", [])]
            students.append(StudentChange(**{**s, "clauses": clauses}))
        return cls(**{**data, "students": students})

    # -- what the instructor reads ------------------------------------------------------------
    def lines(self) -> list[str]:
        """The report as plain lines (printed by ``pe-course grade``; the body of ``regrade.md``)."""
        out = [
            f"Regrade of {self.assignment} on {self.date}{' (DRY RUN: nothing written)' if self.dry_run else ''}",
            f"Graders' version {', '.join(self.previous_versions) or 'unknown'} -> {self.graders_version}",
        ]
        changed = self.score_changes
        out.append(
            f"{len(changed)} students' scores changed; {len(self.students) - len(changed)} changed in "
            f"feedback only; {len(self.unchanged)} unchanged"
            + (f"; {len(self.first_graded)} graded for the first time" if self.first_graded else "")
            + (f"; {len(self.failed)} failed ({', '.join(self.failed)})" if self.failed else "")
        )
        for s in self.students:
            out.append(f"- {s.student}: {s.old_score:g} -> {s.new_score:g}")
            for c in s.clauses:
                where = f"{c.function} {c.clause}".strip()
                out.append(
                    f"    {where} [{', '.join(c.checks) or c.notebook}]: {c.verdict(c.old)} -> {c.verdict(c.new)}"
                    + (f" on {c.input}" if c.input else "")
                )
            for k in s.kept:
                what = "written answer" if k["written"] else "manual score"
                out.append(f"    kept: {what} {k['notebook']}/{k['cell']} = {k['manual']:g}")
        if self.unchanged:
            out.append(f"Unchanged ({len(self.unchanged)}): {', '.join(self.unchanged)}")
        kept = [
            f"{s} {k['notebook']}/{k['cell']} = {k['manual']:g}" for s, ks in self.kept.items() for k in ks
        ]
        if kept:
            out.append(f"Manual scores kept ({len(kept)}): {'; '.join(kept)}")
        if self.before:
            out.append(f"Class before: {distribution(self.before)}")
            out.append(f"Class after:  {distribution(self.after)}")
        return out

    def markdown(self) -> str:
        lines = self.lines()
        return "# " + lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n"


def distribution(scores: list[float]) -> str:
    if not scores:
        return "no students"
    return (
        f"n={len(scores)}, mean {statistics.fmean(scores):.2f}, median {statistics.median(scores):g}, "
        f"min {min(scores):g}, max {max(scores):g}"
    )

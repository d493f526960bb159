"""Every outcome a grading round can name, once: how grading a test cell went (:class:`CellStatus`), why a
note was written on a record (:class:`NoteKind`), and why a notebook or a student needs an instructor's
look (the kinds of :class:`~pe_course.record.Attention` and of the report's issues).

Each has its English text (the instructor's report; the command prints the kind itself) and, where a
student reads it, its Indonesian text (the feedback of a test cell, formal "Anda").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class CellStatus(str, Enum):
    """How grading a test cell's function went (the score says how well)."""

    OK = "ok"
    MISSING_FUNCTION = "missing-function"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    RESOURCE_LIMIT = "resource-limit"
    ERROR = "error"  # raised on every call, or the graders failed

    def __str__(self) -> str:
        return self.value


class NoteKind(str, Enum):
    """Why a note was written on a notebook's record (each is worth an instructor's look)."""

    UNREADABLE_NOTEBOOK = "unreadable-notebook"
    REPAIRED_METADATA = "repaired-metadata"
    DROPPED_METADATA = "dropped-metadata"
    DUPLICATE_CELL = "duplicate-cell"
    RESTORED_CELL = "restored-cell"
    EXECUTION = "execution"
    GRADER_ERROR = "grader-error"
    SUSPECTED_TAMPERING = "suspected-tampering"
    NO_GRADED_FUNCTIONS = "no-graded-functions"
    NOTE = "note"  # anything else (e.g. an unknown kind in an old record)

    def __str__(self) -> str:
        return self.value


UNISOLATED = (
    "NOT ISOLATED"  # how the isolation line of a run without bubblewrap begins (sandbox/isolation.py)
)


@dataclass(frozen=True)
class Outcome:
    english: str  # for the instructor
    indonesian: str = ""  # for the student; "" when a student never reads it


# In the order the report explains them. A test cell's status that is not "ok", a record's note, a
# resource figure (record/attention.py) and a record that cannot be read are each worth a look.
OUTCOMES: dict[str, Outcome] = {
    # the student and their submission (report/collect.py)
    "no-submission": Outcome("in the gradebook, but no submission for this assignment"),
    "not-graded": Outcome("submitted, but not in the gradebook (not autograded yet, or grading failed)"),
    "missing-notebook": Outcome("notebook not submitted (scored 0 by nbgrader)"),
    "no-grading-record": Outcome("notebook submitted but no .grading.json record (not autograded?)"),
    "unreadable-grading-record": Outcome("the .grading.json record could not be read"),
    "record-mismatch": Outcome("the .grading.json record names another student"),
    # a test cell's status (CellStatus)
    CellStatus.OK: Outcome("graded"),
    CellStatus.MISSING_FUNCTION: Outcome(
        "function not found in the submitted notebook",
        "Fungsi ini tidak ditemukan di notebook yang dikumpulkan.",
    ),
    CellStatus.TIMEOUT: Outcome("time-out", "Fungsi ini melewati batas waktu pada sebagian pemanggilan."),
    CellStatus.CRASHED: Outcome("crash while grading", "Proses berhenti saat fungsi ini dijalankan."),
    "late": Outcome("submitted after the due date"),
    CellStatus.RESOURCE_LIMIT: Outcome(
        "went over a resource-group limit (memory, processes, CPU or scratch files)",
        "Fungsi ini melewati batas sumber daya (memori, jumlah proses, waktu CPU atau berkas).",
    ),
    "resource-near": Outcome("came close to a resource-group limit"),
    CellStatus.ERROR: Outcome(
        "raised on every call, or the graders failed", "Fungsi ini melempar error pada setiap pemanggilan."
    ),
    # a note on the record (NoteKind)
    NoteKind.UNREADABLE_NOTEBOOK: Outcome("unreadable notebook: the released stub was graded instead"),
    NoteKind.REPAIRED_METADATA: Outcome("nbgrader cell metadata was repaired"),
    NoteKind.DROPPED_METADATA: Outcome("invalid nbgrader cell metadata was dropped"),
    NoteKind.RESTORED_CELL: Outcome("a deleted test cell was restored"),
    NoteKind.DUPLICATE_CELL: Outcome("a graded or solution cell was duplicated (the last copy counts)"),
    NoteKind.NO_GRADED_FUNCTIONS: Outcome("no graded function found for this notebook"),
    NoteKind.EXECUTION: Outcome("the notebook did not finish running"),
    NoteKind.GRADER_ERROR: Outcome("the graders failed on this notebook (scored 0)"),
    # how it ran (the isolation line begins with UNISOLATED)
    "unisolated": Outcome(
        "graded WITHOUT bubblewrap (the instructor's --unisolated opt-in, for trusted code only)"
    ),
    NoteKind.SUSPECTED_TAMPERING: Outcome("suspected tampering"),
    NoteKind.NOTE: Outcome("grading note"),
}


def english(kind: str) -> str:
    """What an outcome means, for the instructor (an unknown kind, e.g. from a damaged record, as itself)."""
    outcome = OUTCOMES.get(kind)
    return outcome.english if outcome is not None else kind


def indonesian(kind: str) -> str:
    """What an outcome means for the student's feedback ("" when it says nothing to them)."""
    outcome = OUTCOMES.get(kind)
    return outcome.indonesian if outcome is not None else ""

"""Grade a submitted notebook with the hidden graders: where every score comes from.

:func:`grade_notebook` starts the submission's code in the sandboxed worker and grades each graded
function found in the notebook with :func:`grade_function`: every check of the function runs against
it (:class:`~pe_course.engine.grader.Grader` writes what fails into its
:class:`~pe_course.engine.ledger.Ledger`), every failure is charged to one clause by the shipped rule
(:mod:`pe_course.public_checks`), and :func:`award` gives each clause its points. The result is a
:class:`~pe_course.record.GradingRecord`: per test cell ``test_<function>`` the score (the sum of
its clauses' points), status, check messages and diagnosed misconceptions (``GradingRecord.write``
makes it the ``.grading.json`` record).
"""

from __future__ import annotations

import math
import time
import traceback
from typing import Any

from ..course.notebooks import worker_cells
from ..public_checks import CheckFailed, ClauseVerdict
from ..record import CellResult, CellStatus, CheckResult, ClauseResult, GradingRecord, Note, NoteKind
from ..sandbox import Sandbox, sharing
from ..sandbox.client import StudentProcess
from .declarations import Check
from .diagnosis import diagnose
from .discovery import GraderSuite
from .grader import Caller, Grader

# Things an honest solution to these exercises never needs; found in a submission they become
# "suspected-tampering" notes for the instructor (they never change a score: the sandbox and the
# comparisons in this process are what make tampering useless).
SUSPICIOUS = [
    (r"gradebook", "mentions the gradebook"),
    (r"sitecustomize|usercustomize|\.pth\b|conftest", "writes interpreter or pytest start-up files"),
    (r"\bos\._exit|\bsys\.exit|\bos\.kill|getppid|\bsignal\.", "exits or signals processes"),
    (r"input_transformers|register_magic|events\.register", "changes how IPython runs cells"),
    (r"\b(?:np|numpy)(?:\.\w+)+\s*=[^=]", "reassigns numpy functions"),
    (r"\bbuiltins\.\w+\s*=[^=]|__builtins__", "changes Python built-ins"),
    (
        r"def __eq__|def __array__|def __array_ufunc__|__array_priority__",
        "defines rigged comparisons or arrays",
    ),
    (r"\bsys\.modules\b|\bimportlib\b|\bctypes\b", "manipulates modules or memory"),
    (r"\bsubprocess\b|\bsocket\b|\burllib\b|\bos\.system\b", "starts programs or uses the network"),
    (r"\bgc\.get_objects|\binspect\.stack|sys\._getframe", "inspects the interpreter's memory or stack"),
    (r"source/|graders|\.\./\.\.|/proc/", "reads course files or other processes"),
]


def suspicious_code(cells: list[str]) -> list[Note]:
    """``suspected-tampering`` notes for code cells that do what no solution here needs."""
    import re

    notes = []
    for pattern, what in SUSPICIOUS:
        hits = [i for i, source in enumerate(cells) if re.search(pattern, source)]
        if hits:
            notes.append(
                Note(NoteKind.SUSPECTED_TAMPERING, f"{what} (code cell {', '.join(map(str, hits[:5]))})")
            )
    return notes


# --------------------------------------------------------------------------------------------
# Grading
# --------------------------------------------------------------------------------------------
def grade_notebook(
    nb: Any,
    notebook_id: str,
    suite: GraderSuite,
    reference: dict[str, Any],
    sandbox: Sandbox | None = None,
    notes: list[Note] | None = None,
    files: dict[str, bytes] | None = None,
) -> GradingRecord:
    """Grade every graded function of ``nb`` (a notebook dict) with the hidden graders.

    ``files``: the assignment's data files (``pe_course.course.datafiles.data_files``), put beside the
    submission's code in the worker's scratch directory as they sit beside the notebook for the student.
    """
    started = time.monotonic()
    sandbox = sandbox or Sandbox()
    functions = suite.functions_for(notebook_id, nb)
    result = GradingRecord(notebook_id, [], sandbox.isolation, notes=list(notes or []))
    if not functions:
        result.notes.append(
            Note(NoteKind.NO_GRADED_FUNCTIONS, "no graded function for this notebook (unknown file name?)")
        )
        return result
    cells = worker_cells(nb)
    result.notes.extend(suspicious_code(cells))
    with (
        sharing.exclusive(bool(sandbox.use_groups)),
        StudentProcess(cells, functions, sandbox, files) as student,
    ):
        result.cell_errors = student.report.cell_errors
        result.timed_out_cells = student.report.timed_out_cells
        deadline = started + sandbox.limits.notebook_timeout
        student.deadline = deadline
        for fn in functions:
            result.cells.append(grade_function(fn, suite, reference, student, deadline))
    if sandbox.use_groups:
        result.resources["score"] = sandbox.limits.record(student.report.usage)
    result.seconds = time.monotonic() - started
    return result


def grade_function(
    fn: str, suite: GraderSuite, reference: dict[str, Any], student: Caller, deadline: float = math.inf
) -> CellResult:
    """The cell ``test_<fn>``: every check of ``fn`` run against ``student`` (the sandboxed worker, or
    :class:`~pe_course.engine.diagnosis.InProcessCaller` for trusted code), each clause's verdict
    awarded its points, the status, and the misconceptions that explain a lost point."""
    grader = Grader(student, reference, suite.graded.get(fn), public_calls=suite.public_calls(reference, fn))
    comp = suite.compositions.get(fn)
    if comp is not None:  # one mistake, one cell: graded with a correct upstream function
        student.upstream[fn] = (comp.upstream, reference[comp.upstream])
    cell = CellResult(f"test_{fn}", fn, 0.0, suite.max_score(reference, fn), CellStatus.OK)
    found = student.status(fn)
    if found in ("missing", "not-callable"):
        cell.status = CellStatus.MISSING_FUNCTION
    internal_error = False
    for chk in suite.checks[fn]:
        with grader.running(chk):
            internal_error |= _run(chk, grader, found, deadline)
        failed = grader.ledger.found.get(chk.name, [])
        cell.checks.append(
            CheckResult(chk.name, chk.title, not failed, chk.clause, failed[0] if failed else "")
        )
    cell.clauses = [award(v) for v in grader.verdicts(suite.clauses(reference, fn))]
    cell.score = round(sum(c.points for c in cell.clauses), 6)
    if cell.status == CellStatus.OK:
        cell.status = _status(fn, grader, student, internal_error)
    if cell.score < cell.max_score:
        found_m = diagnose(grader.log, suite.misconceptions.get(fn, []), reference)
        cell.misconceptions = [{"id": m.id, "hint": m.hint} for m in found_m]
    return cell


def award(verdict: ClauseVerdict) -> ClauseResult:
    """The one place a clause is given its points: all of them when its verdict passed (nothing was
    charged to it, and the function showed the behaviour it asks for), none otherwise. The verdict
    comes from the charging rule students run too (:func:`pe_course.public_checks.verdicts`); the
    points are given here alone, and a cell's score is their sum."""
    f = verdict.failure
    points = verdict.clause.points if verdict.passed else 0.0
    return ClauseResult(
        verdict.clause.id,
        verdict.clause.text,
        points,
        verdict.clause.points,
        verdict.passed,
        *((f.message, f.input, f.expected, f.obtained) if f else ("", "", "", "")),
        checks=verdict.checks,
        note=verdict.note,
    )


def _run(chk: Check, grader: Grader, found: str, deadline: float) -> bool:
    """Run one check, every failure into the grader's ledger; whether the graders themselves failed."""
    if found in ("missing", "not-callable"):
        message = (
            f"Fungsi `{chk.function}` tidak ditemukan di notebook."
            if found == "missing"
            else f"`{chk.function}` ada di notebook, tetapi bukan fungsi."
        )
        grader.record(CheckFailed(message), 0)
    elif time.monotonic() > deadline:
        grader.record(CheckFailed("Waktu penilaian untuk notebook ini habis."), 0)
    else:
        try:
            chk.run(grader)
        except CheckFailed as exc:  # a stated property that does not hold, or a call without a value
            grader.record(exc, len(exc.input) or 10**6)
        except Exception:  # noqa: BLE001 (a grader bug must never award points)
            detail = traceback.format_exc(limit=3).strip().splitlines()[-1]
            grader.record(CheckFailed(f"Kesalahan internal penilai ({detail}); hubungi pengajar."), 0)
            return True
    return False


def _status(fn: str, grader: Grader, student: Caller, internal_error: bool) -> CellStatus:
    """A cell whose function was found: what its calls, and the worker, say went wrong, if anything."""
    kinds = {rec.outcome.kind for rec in grader.log if rec.fn == fn}
    if "limit" in kinds or student.status(fn) == "limit":
        return CellStatus.RESOURCE_LIMIT
    if "timeout" in kinds or student.status(fn) == "timeout":
        return CellStatus.TIMEOUT
    if "crashed" in kinds or student.status(fn) == "crashed":
        return CellStatus.CRASHED
    if internal_error or (kinds and kinds <= {"raised"}):
        return CellStatus.ERROR
    return CellStatus.OK

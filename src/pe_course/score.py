"""Score: grade a submitted notebook with the hidden graders — where every score comes from.

``grade_notebook`` starts the submission's code in the sandboxed worker, runs every check of every
graded function found in the notebook against it, and returns a :class:`~pe_course.record.GradingRecord`:
per test cell ``test_<function>`` the score (sum of passed checks' points), status, check messages and
diagnosed misconceptions (``GradingRecord.write`` makes it the ``.grading.json`` record).
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from .checks import CheckFailed, Grader
from .course.notebooks import worker_cells
from .diagnosis import diagnose
from .record import CellResult, CellStatus, CheckResult, ClauseResult, GradingRecord, Note, NoteKind
from .sandbox import Sandbox, sharing
from .sandbox.client import StudentProcess
from .suite import GraderSuite

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
            result.cells.append(_grade_function(fn, suite, reference, student, deadline))
    if sandbox.use_groups:
        result.resources["score"] = sandbox.limits.record(student.report.usage)
    result.seconds = time.monotonic() - started
    return result


def _grade_function(
    fn: str, suite: GraderSuite, reference: dict[str, Any], student: StudentProcess, deadline: float
) -> CellResult:
    clauses = suite.clauses(reference, fn)
    cell = CellResult(f"test_{fn}", fn, 0.0, suite.max_score(reference, fn), CellStatus.OK)
    grader = Grader(student, reference, suite.graded.get(fn), public_calls=suite.public_calls(reference, fn))
    comp = suite.compositions.get(fn)
    if comp is not None:  # one mistake, one cell: graded with a correct upstream function
        student.upstream[fn] = (comp.upstream, reference[comp.upstream])
    status = student.status(fn)
    if status in ("missing", "not-callable"):
        cell.status = CellStatus.MISSING_FUNCTION
    internal_error = False
    for chk in suite.checks[fn]:
        with grader.running(chk):
            if cell.status == CellStatus.MISSING_FUNCTION:
                message = (
                    f"Fungsi `{fn}` tidak ditemukan di notebook."
                    if status == "missing"
                    else f"`{fn}` ada di notebook, tetapi bukan fungsi."
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
                    internal_error = True
                    detail = traceback.format_exc(limit=3).strip().splitlines()[-1]
                    grader.record(CheckFailed(f"Kesalahan internal penilai ({detail}); hubungi pengajar."), 0)
        found = grader.found.get(chk.name, [])
        cell.checks.append(CheckResult(chk.name, chk.title, not found, chk.clause, found[0] if found else ""))
    for v in grader.verdicts(clauses):
        f = v.failure
        cell.clauses.append(
            ClauseResult(
                v.clause.id,
                v.clause.text,
                v.points,
                v.clause.points,
                v.passed,
                *((f.message, f.input, f.expected, f.obtained) if f else ("", "", "", "")),
                checks=v.checks,
                note=v.note,
            )
        )
    cell.score = round(sum(c.points for c in cell.clauses), 6)
    kinds = {rec.outcome.kind for rec in grader.log if rec.fn == fn}
    if cell.status == CellStatus.OK:
        if "limit" in kinds or student.status(fn) == "limit":
            cell.status = CellStatus.RESOURCE_LIMIT
        elif "timeout" in kinds or student.status(fn) == "timeout":
            cell.status = CellStatus.TIMEOUT
        elif "crashed" in kinds or student.status(fn) == "crashed":
            cell.status = CellStatus.CRASHED
        elif internal_error or (kinds and kinds <= {"raised"}):
            cell.status = CellStatus.ERROR
    if cell.score < cell.max_score:
        found_m = diagnose(grader.log, suite.misconceptions.get(fn, []), reference)
        cell.misconceptions = [{"id": m.id, "hint": m.hint} for m in found_m]
    return cell


# --------------------------------------------------------------------------------------------
# In nbgrader's autograde step
# --------------------------------------------------------------------------------------------

"""Collect what the report shows: the gradebook (nbgrader's API) and the graders' ``.grading.json`` records.

Everything taken from a submission or a record (student ids, notes, check messages, even titles and
ids in a record) is untrusted: it is kept as plain text here and escaped by the template.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from ..course import Course
from ..record import CellResult, ClauseResult, notebook_attention
from .data import CellStat, ClauseStat, Issue, MisconceptionStat, ReportData, StudentReport


# --------------------------------------------------------------------------------------------
# Collecting
# --------------------------------------------------------------------------------------------
def collect(course: Course) -> ReportData:
    """Everything the report shows, from the gradebook (nbgrader's API) and the grading records."""
    generated = datetime.now().astimezone()
    with course.gradebook(must_exist=True) as gb:
        assignment = gb.find_assignment(course.assignment)
        duedate = assignment.duedate
        notebooks = [nb.name for nb in assignment.notebooks]
        notebook_max = {nb.name: float(nb.max_score or 0.0) for nb in assignment.notebooks}
        cells: dict[tuple[str, str], CellStat] = {}
        for nb in assignment.notebooks:
            for gc in nb.grade_cells:
                if gc.cell_type == "code":  # test cells are autograded; markdown ones are written answers
                    cells[(nb.name, gc.name)] = CellStat(nb.name, gc.name, float(gc.max_score or 0.0))
        students: list[StudentReport] = []
        for sub in assignment.submissions:
            by_nb = {snb.name: snb for snb in sub.notebooks}
            report = StudentReport(
                sub.student.id, {}, float(sub.score or 0.0), float(sub.late_submission_penalty or 0.0)
            )
            late = float(sub.total_seconds_late or 0.0)
            if (
                late > 0
            ):  # the timestamp the LMS stored (zip_collect) or nbgrader's exchange, after the due date
                report.issues.append(
                    Issue(
                        sub.student.id,
                        "",
                        "late",
                        f"submitted {late / 3600:.1f} h after the due date "
                        f"(timestamp {sub.timestamp}, penalty {report.penalty:g})",
                    )
                )
            for name in notebooks:
                snb = by_nb.get(name)
                report.scores[name] = float(snb.score or 0.0) if snb is not None else 0.0
                for grade in snb.grades if snb is not None else []:
                    report.cell_scores[(name, grade.name)] = float(grade.score or 0.0)
                    if grade.needs_manual_grade:
                        report.manual.append((name, grade.name))
            students.append(report)
        submitted_ids = {s.student for s in students}
        no_submission = sorted(s.id for s in gb.students if s.id not in submitted_ids)

    students.sort(key=lambda s: s.student)
    _lms_lateness(course, students)
    results: dict[tuple[str, str, str], list[tuple[str, ClauseResult]]] = {}
    diagnosed: dict[tuple[str, str], dict[str, str]] = {}  # (function, id) -> student -> hint
    for report in students:
        _read_student(course, report, notebooks, cells, results, diagnosed)
    clauses = [_clause_stat(key, found, cells[key[:2]].n) for key, found in results.items()]

    misconceptions = [
        MisconceptionStat(fn, mid, _hint(hints), sorted(hints)) for (fn, mid), hints in diagnosed.items()
    ]
    misconceptions.sort(key=lambda m: (-m.count, m.function, m.id))
    # submitted/ but no submission in the gradebook: not graded (yet), whether or not nbgrader knows the student
    not_graded = sorted(set(_submitted_students(course)) - {s.student for s in students})
    no_submission = [s for s in no_submission if s not in not_graded]
    return ReportData(
        course.assignment,
        generated,
        duedate,
        notebooks,
        notebook_max,
        students,
        list(cells.values()),
        clauses,
        misconceptions,
        no_submission=no_submission,
        not_graded=not_graded,
    )


def _lms_lateness(course: Course, students: list[StudentReport]) -> None:
    """Students the LMS marked late without a submission time (Canvas's ``_LATE``): nbgrader applied no
    penalty, so the report says so (the LMS's own late policy applies to the imported grade)."""
    from ..lms.identities import load

    try:
        identities = load(course.root, course.assignment)
    except ValueError:
        return  # unreadable: pe-course export and the intake say so
    for report in students:
        rec = identities.get(report.student)
        if rec is None or not rec.late or rec.time or any(i.kind == "late" for i in report.issues):
            continue
        report.issues.append(
            Issue(
                report.student,
                "",
                "late",
                f"marked late by {rec.lms.capitalize()} ({rec.time_source or 'its own flag'}); no submission "
                f"time, so no nbgrader penalty: {rec.lms.capitalize()}'s own late policy applies",
            )
        )


def _submitted_students(course: Course) -> list[str]:
    folder = course.submitted
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / course.assignment).is_dir())


def _read_student(
    course: Course,
    report: StudentReport,
    notebooks: list[str],
    cells: dict[tuple[str, str], CellStat],
    results: dict[tuple[str, str, str], list[tuple[str, ClauseResult]]],
    diagnosed: dict[tuple[str, str], dict[str, str]],
) -> None:
    student = report.student
    submitted = course.submitted / student / course.assignment
    graded = course.autograded / student / course.assignment
    for name in notebooks:
        record, found = notebook_attention(submitted, graded, student, name)
        report.issues += [Issue(student, name, a.kind, a.detail[:1000]) for a in found]
        if any(a.kind == "missing-notebook" for a in found):
            report.missing.append(name)
            continue
        for (nb, gid), stat in cells.items():
            if nb == name:
                stat.scores.append(report.cell_scores.get((nb, gid), 0.0))
        seen: set[str] = set()
        for cell in record.cells if record is not None else []:
            if cell.grade_id not in seen:  # a damaged record's second copy of a cell counts nothing
                seen.add(cell.grade_id)
                _read_cell(report, name, cell, cells, results, diagnosed)


def _read_cell(
    report: StudentReport,
    notebook: str,
    cell: CellResult,
    cells: dict[tuple[str, str], CellStat],
    results: dict[tuple[str, str, str], list[tuple[str, ClauseResult]]],
    diagnosed: dict[tuple[str, str], dict[str, str]],
) -> None:
    stat = cells.get((notebook, cell.grade_id))
    if stat is not None:  # a cell the gradebook does not grade has no clause worth counting
        stat.statuses[cell.status.value] += 1
        seen: set[str] = set()
        for result in cell.clauses:
            key = (notebook, cell.grade_id, result.clause[:40])
            if key[2] not in seen:  # a clause counts once per student, even in a damaged record
                seen.add(key[2])
                results.setdefault(key, []).append((report.student, result))
    for m in cell.misconceptions:
        hints = diagnosed.setdefault((cell.function, m["id"]), {})
        hints[report.student] = m["hint"] or hints.get(report.student, "")


def _hint(hints: dict[str, str]) -> str | None:
    """The hint most students' records of a misconception give (a regrade after the graders changed, or
    a damaged record, cannot decide it); None when no record kept one (written before records kept hints)."""
    given = Counter(hint for hint in hints.values() if hint)
    return given.most_common(1)[0][0] if given else None


def _clause_stat(
    key: tuple[str, str, str], results: list[tuple[str, ClauseResult]], submitted: int
) -> ClauseStat:
    """One clause over the students whose records carry it. Its text and points are the ones most
    records give (a re-grade after the notebook changed, or a damaged record, cannot decide them)."""
    texts = Counter(r.text.strip()[:1000] for _, r in results)
    points = Counter(r.max_points for _, r in results)
    cs = ClauseStat(*key, texts.most_common(1)[0][0], points.most_common(1)[0][0], submitted, len(results))
    for student, r in results:
        if r.passed:
            continue
        cs.students.append(student)
        if r.message.strip():
            cs.messages[r.message.strip()[:300]] += 1
        if r.input.strip():
            cs.inputs[r.input.strip()[:200]] += 1
        for name in dict.fromkeys(r.checks):
            cs.found_by[name[:80]] += 1
    return cs

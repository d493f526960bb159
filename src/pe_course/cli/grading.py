"""What ``pe-course grade`` prints: the round's progress bars, then its scores (with an isolation
column when some student was graded without bubblewrap) and the students who need attention; on a
Dask cluster, first the workers and their isolation, and at the end what this machine spent."""

from __future__ import annotations

import contextlib

from rich.markup import escape
from rich.table import Table

from ..course import Course
from ..lms.export import pending_manual_grades
from ..record import GradingRecord
from ..round.grade import grade_round
from ..round.regrade_report import RegradeReport
from ..round.runner import Runner
from ..round.summary import RoundSummary
from ..runners.dask_cluster import (
    REFUSES,
    ClusterUnavailable,
    DaskRunner,
    connect,
    describe,
    worker_isolation,
)
from ..runners.local import LocalRunner
from .terminal import console, isolation_line, progress


def grade_command(course: Course, args, unisolated: bool, assignment_ready, ungrouped: bool = False) -> int:
    """``pe-course grade``: intake, the round (locally or on a Dask cluster), its scores and, for students
    graded before, the regrade report; with ``--dry-run`` only the report, and nothing written."""
    dry_run = bool(getattr(args, "dry_run", False))
    isolation = (
        "" if args.scheduler else isolation_line(unisolated, ungrouped=ungrouped)
    )  # workers say theirs below
    if isolation is None:
        return 2  # before anything is written: no gradebook entry, no moved submission
    if not assignment_ready(course):
        return 2
    from ..lms.intake import tidy_submissions
    from ..round.grade import submitted_students

    if dry_run:
        console.print("Dry run: nothing is written (gradebook, records, feedback, intake, state).")
    else:
        for message in tidy_submissions(
            course.submitted, course.assignment, course.notebooks, course.other_notebooks
        ):
            console.print(f"Intake: {message}")
    if not submitted_students(course):
        console.print(
            f"[red]No submissions[/] in {course.submitted}/<student>/{course.assignment}/ "
            "— take them in first (nbgrader collect, or nbgrader zip_collect for an LMS download; "
            "guide: docs/lms.md#taking-the-submissions-in)."
        )
        return 2
    cluster = None
    if args.scheduler:
        cluster = cluster_ready(args.scheduler, unisolated, ungrouped)
        if cluster is None:
            return 2
    else:
        console.print(isolation)
    try:
        runner = DaskRunner(cluster, args.jobs) if cluster is not None else LocalRunner(args.jobs)
        summary, feedback_failures = run_grading(
            course,
            runner,
            args.student or None,
            args.force,
            unisolated=unisolated,
            dry_run=dry_run,
            ungrouped=ungrouped,
        )
    finally:
        if cluster is not None:
            cluster.close()
    if not dry_run:
        print_round(course, summary, feedback_failures)
    print_regrade(course, summary.regrade)
    if cluster is not None:
        print_cluster_figures(summary)
    return 1 if summary.failed else 0


def print_regrade(course: Course, report: RegradeReport | None) -> None:
    """The regrade report, when students graded before were graded again (and where it was written)."""
    if report is None or not report.regraded:
        if report is not None and report.dry_run:
            console.print("Dry run: no student graded before would be graded again.")
        return
    console.rule("Regrade")
    for line in report.lines():
        console.print(escape(line), soft_wrap=True, highlight=False)
    if not report.dry_run:
        console.print(
            f"Regrade report: {escape(report.folder)}/regrade.md (and regrade.json)", soft_wrap=True
        )


def cluster_ready(address: str, unisolated: bool, ungrouped: bool = False):
    """A client of the Dask scheduler at ``address``, after printing the cluster and every worker's
    isolation line; None after printing the one line that says why not (unreachable, or workers that
    cannot isolate student code: the round does not start)."""
    try:
        cluster = connect(address)
    except ClusterUnavailable as exc:
        console.print(f"[red]{escape(str(exc))}[/]", soft_wrap=True)
        return None
    workers, threads, notes = describe(cluster)
    console.print(f"Dask cluster {escape(address)}: {workers} workers, {threads} threads")
    found = worker_isolation(cluster, unisolated, ungrouped)
    refusing = sorted(w for line, where in found.items() if line.startswith(REFUSES) for w in where)
    if refusing:
        cluster.close()
        line = next(line for line in found if line.startswith(REFUSES))
        console.print(
            f"[red]{len(refusing)} worker(s) cannot isolate student code[/] ({escape(', '.join(refusing))}): "
            f"{escape(line)}",
            soft_wrap=True,
        )
        return None
    for line, where in found.items():
        console.print(f"Sandbox on {len(where)} worker(s): {escape(line)}")
    for note in notes:
        console.print(f"[yellow]Note:[/] {note}")
    return cluster


def print_cluster_figures(summary: RoundSummary) -> None:
    """After a round on a cluster: what this machine spent merging, and making pages."""
    if not summary.graded:
        return
    console.print(
        f"Merged here (the single gradebook writer): {summary.merge_seconds:.1f} s, "
        f"{summary.merge_seconds / len(summary.graded):.2f} s per student."
    )
    if summary.feedback_seconds:
        console.print(
            f"Feedback made here for students with earlier manual scores: {summary.feedback_seconds:.1f} s "
            "(everyone else's was made on the workers)."
        )


def run_grading(
    course: Course,
    runner: Runner,
    students=None,
    force: bool = False,
    unisolated: bool = False,
    dry_run: bool = False,
    ungrouped: bool = False,
):
    """Grade with live progress bars, each student's feedback following their grades; returns
    (summary, feedback failures). The tasks run on ``runner``: local processes, or a Dask cluster's workers."""
    with progress() as bars:
        bar = bars.add_task("Grading ", total=None, failed=0)
        feedback_bar = bars.add_task("Feedback", total=None, failed=0, start=False, visible=not dry_run)

        def on_event(kind, student, summary):
            if kind == "start":
                bars.update(bar, total=summary.to_grade)
                bars.update(feedback_bar, total=summary.to_grade + summary.feedback_owed)
                bars.start_task(feedback_bar)
            elif kind in ("graded", "failed"):
                bars.update(bar, advance=1, failed=len(summary.failed))
                if kind == "failed" and student not in summary.graded:  # no feedback to wait for
                    total = bars.tasks[feedback_bar].total
                    bars.update(feedback_bar, total=max(0, (total or 1) - 1))
            elif kind == "feedback":
                bars.update(feedback_bar, advance=1, failed=len(summary.feedback_failed))

        summary = grade_round(
            course,
            runner,
            students,
            force=force,
            on_event=on_event,
            feedback=True,
            unisolated=unisolated,
            dry_run=dry_run,
            ungrouped=ungrouped,
        )
    return summary, summary.feedback_failed


def print_round(course: Course, summary: RoundSummary, feedback_failures: dict[str, str]) -> None:
    notebooks, rows = score_table(course)
    bare = {row[0] for row in rows if graded_unisolated(course, row[0])}
    columns = ["student", *notebooks, "total", "written answers", *(["isolation"] if bare else [])]
    table = Table(*columns, title=f"Scores: {course.assignment}")
    for student, scores, total, maximum, pending in rows:
        table.add_row(
            escape(student),
            *("-" if s is None else f"{s:g}" for s in scores),
            f"{total:g}/{maximum:g}",
            f"{pending} to grade" if pending else "graded",
            *((["[red]NOT ISOLATED[/]" if student in bare else "bubblewrap"]) if bare else []),
        )
    console.print(table)
    if bare:
        console.print(
            f"[bold red]{len(bare)} students were graded WITHOUT isolation[/] (--unisolated / "
            "c.Isolation.required = False): for trusted code only; grade a real class with bubblewrap."
        )
    waiting = sum(1 for row in rows if row[4])
    if waiting:
        console.print(
            f"{waiting} students have written answers to grade: pe-course formgrader, then "
            f"pe-course feedback {course.assignment}."
        )
    console.print(
        f"Graded {len(summary.graded)}, skipped (unchanged) {len(summary.skipped)}, "
        f"failed {len(summary.failed)} in {summary.seconds:.1f} s, feedback for "
        f"{len(summary.feedback)} included."
    )
    needs = {**{s: [f"grading failed: {why}"] for s, why in summary.failed.items()}, **summary.attention}
    for student, why in feedback_failures.items():
        needs.setdefault(student, []).append(f"feedback failed: {why}")
    if needs:
        attention = Table("student", "needs attention because", title="Students needing attention")
        for student in sorted(needs):
            attention.add_row(escape(student), "\n".join(escape(why) for why in needs[student]))
        console.print(attention)


def score_table(course: Course) -> tuple[list[str], list[tuple[str, list[float | None], float, float, int]]]:
    """(notebooks, rows of (student, score per notebook, total, max, written answers awaiting a
    grader)) from the course gradebook."""
    with course.gradebook() as gb:
        assignment = gb.find_assignment(course.assignment)
        notebooks = [f"{nb.name} (/{nb.max_score:g})" for nb in assignment.notebooks]
        rows = []
        for sub in sorted(assignment.submissions, key=lambda s: s.student.id):
            by_name = {nb.name: nb.score for nb in sub.notebooks}
            rows.append(
                (
                    sub.student.id,
                    [by_name.get(nb.name) for nb in assignment.notebooks],
                    sub.score,
                    sub.max_score,
                    pending_manual_grades(sub),
                )
            )
    return notebooks, rows


def graded_unisolated(course: Course, student: str) -> bool:
    """Whether any record of this student says it was graded without bubblewrap (the opt-in)."""
    for path in sorted((course.autograded / student / course.assignment).glob("*.grading.json")):
        with contextlib.suppress(OSError, ValueError):
            if GradingRecord.read(path).unisolated:
                return True
    return False

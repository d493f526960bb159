"""The round's commands: ``pe-course grade``, ``feedback`` (after manual grading) and ``report``."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ..course import Course
from ..interruption import deferred
from .common import assignment_ready, course_of
from .terminal import console, progress


def _opted_in(course: Course) -> tuple[bool, bool]:
    from ..sandbox.policy import ungrouped_allowed, unisolated_allowed

    config = course.config()
    return unisolated_allowed(config), ungrouped_allowed(config)


def cmd_grade(args) -> int:
    from .grading import grade_command

    course = course_of(args)
    unisolated, ungrouped = _opted_in(course)
    return grade_command(
        course,
        args,
        args.unisolated or unisolated,
        assignment_ready,
        ungrouped=args.without_resource_groups or ungrouped,
    )


def write_report_if_possible(course: Course):
    try:
        from ..report import write_report
    except ImportError:
        return None
    return write_report(course)


def cmd_feedback(args) -> int:
    """After manual grading: feedback regenerated for everyone, released, and zipped for an LMS."""
    from ..round.grade import feedback_round
    from ..runners.local import LocalRunner
    from ..steps.feedback_pages import zip_for_lms

    course = course_of(args)
    if not assignment_ready(course):
        return 2
    with course.gradebook() as gb:
        students = sorted(s.student.id for s in gb.find_assignment(course.assignment).submissions)
    if not students:
        console.print(
            f"[red]Nothing to give back[/]: no graded submissions of {course.assignment} "
            "(run pe-course grade first; guide: docs/instructor-guide.md#instructor-guide-the-grading-round)."
        )
        return 2
    with progress() as bars:
        bar = bars.add_task("Feedback", total=len(students), failed=0)

        def one_done(student: str, ok: bool, error: str) -> None:
            failed = bars.tasks[bar].fields["failed"] + (0 if ok else 1)
            bars.update(bar, advance=1, failed=failed)

        failures = feedback_round(course, LocalRunner(args.jobs), students, on_done=one_done)
    for student, why in sorted(failures.items()):
        console.print(f"[red]feedback failed for {student}[/]: {why}")
    done = [s for s in students if s not in failures]
    console.print(f"Feedback generated for {len(done)} students in {course.feedback}/ (HTML pages only).")
    zips = zip_for_lms(course, done)
    console.print(
        f"For an LMS: one zip per student in {zips}/ (upload each as that student's feedback file)."
    )
    if args.exchange:
        with deferred():  # nbgrader's apps swallow a KeyboardInterrupt as a failure: Ctrl-C waits for the end
            released = course.api().release_feedback(course.assignment)
        if released.get("success"):
            console.print("Released through the nbgrader exchange: students fetch it in the Assignment List.")
        else:
            console.print(f"[red]nbgrader release_feedback failed[/]: {_first_line(released.get('error'))}")
            return 1
    return 1 if failures else 0


def _first_line(text) -> str:
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "unknown error"


def cmd_report(args) -> int:
    course = course_of(args)
    if not assignment_ready(course):
        return 2
    from ..report import write_report
    from ..round.regrade import history
    from ..round.regrade_report import distribution

    path = write_report(course, Path(args.out) if args.out else None)
    console.print(f"Report written: {path}")
    regrades = history(course)
    if regrades:
        table = Table("date", "graders' version", "changed", "unchanged", "class before", "class after",
                      title="Regrades")  # fmt: skip
        for r in regrades:
            table.add_row(r.date, f"{', '.join(r.previous_versions)} -> {r.graders_version}",
                          str(len(r.students)), str(len(r.unchanged)), distribution(r.before),
                          distribution(r.after))  # fmt: skip
        console.print(table)
    return 0

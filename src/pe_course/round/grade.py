"""A grading round, written once over a runner (:mod:`pe_course.runners`): local processes or a Dask
cluster run the tasks; everything else happens here, the same for both.

1. **Skip unchanged**: a student whose submission, graders and package are unchanged since the merge
   recorded in the state log (:mod:`pe_course.round.resume`) is skipped, unless ``force``.
2. **Tasks**: one :class:`~pe_course.round.task.GradeTask` per other student: nbgrader's Autograde
   against a private gradebook and, with ``feedback``, the student's pages made with the grades.
3. **Merge each result once**, as it arrives, through the single writer (:mod:`pe_course.round.writer`):
   results that arrive together share one commit; only after the commit are the student's files
   (grades, and pages) moved into place and the student recorded in the state log.
4. **Feedback**: a student whose pages could not come with the grades — who already had manual
   scores (the private gradebook lacks them), or whose worker could not make them — and a skipped
   student whose pages are missing (a round interrupted in between) get them from the course
   gradebook (a :class:`~pe_course.round.task.FeedbackTask`).
5. **Attention**: every graded or skipped student whose records need an instructor's look.
6. **Interruption** (Ctrl-C, SIGTERM): the runner stops every task, the results received are
   committed, the round's scratch folder is removed; the same command goes on from there.
7. **Regrade** (:mod:`pe_course.round.regrade`): students graded before are compared with their previous
   version (records kept in ``regrades/<assignment>/<stamp>/``, the report beside them, the changed
   students' pages made again to say what changed); with ``dry_run`` the workers grade into a scratch
   folder and the comparison is all that comes back: no gradebook, record, page or state is written.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from ..course import Course
from ..interruption import deferred
from ..sandbox.scratch import sweep_left_behind
from .merge import feedback_done, finish, settle
from .regrade import Regrade, State
from .resume import GradeState, graders_fingerprint, submission_fingerprint
from .runner import Runner
from .summary import Notify, RoundSummary, attention_reasons
from .task import FeedbackOutcome, FeedbackTask, GradeOutcome, GradeTask, build_template
from .writer import GradebookWriter


def submitted_students(course: Course) -> list[str]:
    folder = course.submitted
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / course.assignment).is_dir())


def grade_round(
    course: Course,
    runner: Runner,
    students: Iterable[str] | None = None,
    force: bool = False,
    on_event: Notify | None = None,
    feedback: bool = False,
    unisolated: bool = False,
    dry_run: bool = False,
    ungrouped: bool = False,
) -> RoundSummary:
    """Grade submissions; merge each as it finishes; skip unchanged ones unless ``force``.

    ``on_event(kind, student, summary)`` is called with kind in {"skipped", "graded", "failed",
    "feedback"}, and once with "start" (no student) when ``summary.to_grade`` and
    ``summary.feedback_owed`` (skipped students whose feedback is missing) are known: the progress
    display hooks in here.
    With ``feedback``, each student's pages come with their grades ("feedback" right after "graded";
    failures in ``summary.feedback_failed``). The tasks run on ``runner``, the command's choice (local
    processes or a Dask cluster, :mod:`pe_course.runners`); the round uses it once and closes it. ``unisolated``
    is the instructor's opt-in (trusted code only): without it a worker where bubblewrap does not
    work refuses every student; ``ungrouped`` likewise where no resource group can be made.
    """
    started = time.monotonic()
    summary = RoundSummary()
    notify = on_event or (lambda *a: None)
    known = submitted_students(course)
    chosen = list(students) if students else known
    for missing in sorted(set(chosen) - set(known)):
        summary.failed[missing] = "no submission in submitted/"
        notify("failed", missing, summary)
    chosen = [s for s in chosen if s in known]
    state = GradeState(course, readonly=dry_run)
    graders = graders_fingerprint(course)
    sweep_left_behind()  # what an earlier round killed with SIGKILL could not remove itself
    regrade = Regrade(course, dry_run)
    if dry_run:  # nothing inside the course directory, not even a scratch folder
        work_dir = Path(tempfile.mkdtemp(prefix="pe-course-dry-run-"))
    else:
        work_dir = course.state_dir / "work" / uuid.uuid4().hex[:8]
    pages_due: list[str] = []
    try:
        with runner:  # closed (cancelled when interrupted) before the scratch folder goes
            work_dir.mkdir(parents=True, exist_ok=True)
            template = build_template(course, work_dir / "template.db")
            tasks = []
            for student in chosen:
                fingerprint = submission_fingerprint(course, student, graders)
                already = (course.autograded / student / course.assignment).is_dir()
                if not force and already and state.get(student) == fingerprint:
                    summary.skipped.append(student)
                    notify("skipped", student, summary)
                    continue
                staging = str(work_dir / student)
                regrade.remember(student)  # what it was before, to compare with what it becomes
                root, assignment = str(course.root), course.assignment
                tasks.append(
                    GradeTask(
                        root,
                        assignment,
                        student,
                        str(template),
                        staging,
                        fingerprint,
                        unisolated,
                        feedback and not dry_run,
                        ungrouped,
                    )
                )
            # a student skipped as unchanged whose feedback is missing or out of date (the round that graded
            # them was interrupted before it) gets it in this round
            owed = [s for s in summary.skipped if feedback and not dry_run and pages_owed(course, s)]
            summary.to_grade, summary.feedback_owed = len(tasks), len(owed)
            notify("start", "", summary)
            if tasks or owed:
                runner.open(course, template)
                if dry_run:
                    after = _dry_run(runner, tasks, regrade, summary, notify)
                    summary.regrade = regrade.compare(after, summary.failed)
                else:
                    with GradebookWriter(course, previous=regrade.previous) as writer:
                        try:
                            _run(runner, writer, tasks, owed, state, summary, notify, feedback)
                        finally:  # interrupted too: the report of every student merged so far
                            with deferred():
                                after = regrade.after_merge(summary.graded)
                                summary.regrade = regrade.compare(after, summary.failed)
                                pages_due = regrade.keep(summary.regrade, after)
            if feedback and pages_due:  # their pages say what changed, from the records that now say it
                summary.feedback_failed.update(make_pages(runner, course, pages_due))
    finally:
        with deferred():  # nothing of the round's scratch folder is left, whenever the round ends
            shutil.rmtree(work_dir, ignore_errors=True)
            with contextlib.suppress(OSError):
                (course.state_dir / "work").rmdir()
    for student in summary.skipped:  # graded before and unchanged: their records still speak
        reasons = attention_reasons(course, student)
        if reasons:
            summary.attention[student] = reasons
    summary.seconds = time.monotonic() - started
    return summary


def _run(
    runner: Runner,
    writer: GradebookWriter,
    tasks: list[GradeTask],
    owed: list[str],
    state: GradeState,
    summary: RoundSummary,
    notify: Notify,
    feedback: bool,
) -> None:
    """Every task through ``runner``; each result merged once, as it comes; pages made here for whoever
    did not get them with the grades."""
    course = writer.course

    def pages_here(students: Iterable[str]) -> None:
        for student in students:
            runner.submit(FeedbackTask(str(course.root), course.assignment, student))

    pages_here(owed)
    for task in tasks:
        runner.submit(task)
    merged: set[str] = set()
    try:
        while runner.unfinished:
            done = runner.next_finished()
            without_pages: list[str] = []
            if isinstance(done.outcome, FeedbackOutcome):
                feedback_done(summary, notify, done.outcome)
            elif done.outcome.student not in merged:  # never twice into the gradebook, whatever a cluster did
                merged.add(done.outcome.student)
                finish(writer, done.outcome, state, summary, notify, False, without_pages)
            if not runner.ready():  # results that arrive faster than the writer commits share one commit
                settle(writer, state, summary, notify, without_pages)
            if feedback:
                pages_here(without_pages)
    except BaseException:  # Ctrl-C, SIGTERM: what was merged stays, the rest is graded next time
        with deferred():
            runner.cancel()
            with contextlib.suppress(Exception):
                settle(writer, state, summary, notify)  # results already received are complete
        raise


def pages_owed(course: Course, student: str) -> bool:
    """A skipped student's pages are owed when missing, or older than their record (a regrade wrote what
    changed into the record, and the round was interrupted before the pages were made again)."""
    pages = course.feedback / student / course.assignment
    if not pages.is_dir():
        return True
    for record in (course.autograded / student / course.assignment).glob("*.grading.json"):
        page = pages / f"{record.name.removesuffix('.grading.json')}.html"
        if page.is_file() and page.stat().st_mtime_ns < record.stat().st_mtime_ns:
            return True
    return False


def _dry_run(
    runner: Runner, tasks: list[GradeTask], regrade: Regrade, summary: RoundSummary, notify: Notify
) -> dict[str, State]:
    """Every task through ``runner``; each result read from its staging folder, never merged."""
    after: dict[str, State] = {}
    for task in tasks:
        runner.submit(task)
    try:
        while runner.unfinished:
            outcome = runner.next_finished().outcome
            student = outcome.student
            if student in after or student in summary.failed or not isinstance(outcome, GradeOutcome):
                continue
            try:
                if not outcome.ok:
                    raise RuntimeError(outcome.error or "nbgrader autograde failed")
                after[student] = regrade.after_staging(student, Path(outcome.staging))
                summary.graded.append(student)
                notify("graded", student, summary)
            except Exception as exc:  # noqa: BLE001 (reported per student; the others go on)
                summary.failed[student] = str(exc)
                notify("failed", student, summary)
    except BaseException:
        with deferred():
            runner.cancel()
        raise
    return after


def make_pages(
    runner: Runner,
    course: Course,
    students: Iterable[str],
    on_done: Callable[[str, bool, str], None] | None = None,
) -> dict[str, str]:
    """Every student's pages from the course gradebook, through ``runner`` (entered by the caller);
    returns failures (student -> why)."""
    failures: dict[str, str] = {}
    for student in students:
        runner.submit(FeedbackTask(str(course.root), course.assignment, student))
    while runner.unfinished:
        outcome = runner.next_finished().outcome
        if not outcome.ok:
            failures[outcome.student] = outcome.error or "generate_feedback failed"
        if on_done:
            on_done(outcome.student, outcome.ok, failures.get(outcome.student, ""))
    return failures


def feedback_round(
    course: Course,
    runner: Runner,
    students: Iterable[str],
    on_done: Callable[[str, bool, str], None] | None = None,
) -> dict[str, str]:
    """Every student's pages from the course gradebook on ``runner`` (after manual grading); returns
    failures (student -> why)."""
    with runner:
        return make_pages(runner, course, students, on_done)

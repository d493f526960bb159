"""Grade a whole class in parallel with one gradebook writer.

Each submission is a task. A worker runs nbgrader's own ``Autograde`` app for one student against a
*private* SQLite gradebook (a template holding only the assignment's structure) and a private
staging directory; it never touches the course gradebook. The main process is the single writer:
it copies the worker's grades into the course gradebook (``CourseDirectory.db_url`` — SQLite or
PostgreSQL alike) with nbgrader's API in one transaction, moves the autograded files into place,
and records a fingerprint of what it graded so an interrupted run can resume and an unchanged
submission is skipped.

Workers run on any ``concurrent.futures.Executor``; :func:`local_executor` gives local processes.
On a Dask cluster (:mod:`pe_course.cluster`) the same :func:`grade_one` runs on remote workers in a
private course directory built from what the task carries, and its results come back to
:func:`finish` here, the same single writer.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import shutil
import signal
import sys
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .course import Course
from .feedback import tidy
from .record import notebook_attention
from .resume import GradeState, graders_fingerprint, submission_fingerprint
from .sandbox import groups, policy
from .writer import GradebookWriter


@dataclass(frozen=True)
class GradeTask:
    root: str
    assignment: str
    student: str
    template_db: str
    staging: str
    fingerprint: str
    unisolated: bool = False  # the instructor's opt-in: grade even where bubblewrap does not work


@dataclass
class GradeOutcome:
    student: str
    ok: bool
    staging: str
    fingerprint: str
    seconds: float = 0.0
    error: str = ""
    log: str = ""
    feedback: bool = (
        False  # the staging folder holds this student's feedback pages (made on a cluster worker)
    )
    feedback_error: str = ""  # why a worker could not make them


@dataclass
class RoundSummary:
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # student -> why
    attention: dict[str, list[str]] = field(default_factory=dict)  # student -> reasons
    feedback: list[str] = field(default_factory=list)  # students whose feedback was generated
    feedback_failed: dict[str, str] = field(default_factory=dict)  # student -> why
    seconds: float = 0.0
    feedback_seconds: float = 0.0  # after a round on a cluster: the feedback generated here
    merge_seconds: float = 0.0  # spent by the single writer merging results (the part no worker can share)


# --------------------------------------------------------------------------------------------
# Private gradebooks
# --------------------------------------------------------------------------------------------
def build_template(course: Course, path: Path) -> Path:
    """A SQLite gradebook holding only the assignment's structure, copied from the course gradebook."""

    if path.exists():
        path.unlink()
    with course.gradebook() as main:
        _stamp_schema_version(path, main)
        with course.gradebook(f"sqlite:///{path}") as tmpl:
            _copy_structure(main, tmpl, course.assignment)
    return path


def _stamp_schema_version(path: Path, main) -> None:
    """Give a new SQLite gradebook the course gradebook's schema version before nbgrader opens it.

    nbgrader stamps a new gradebook by running the ``alembic`` command (about 2.5 s, before any
    worker can start); the version is the course gradebook's own, so it is copied instead.
    """
    import sqlite3

    from sqlalchemy import text

    try:
        version = main.db.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except Exception:  # noqa: BLE001 (no version table: nbgrader stamps the new one itself)
        main.db.rollback()
        return
    if version:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
            db.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (version,))


def _copy_structure(main, tmpl, assignment: str) -> None:
    a = main.find_assignment(assignment)
    tmpl.update_or_create_assignment(a.name, duedate=a.duedate)
    for nb in a.notebooks:
        tmpl.update_or_create_notebook(nb.name, a.name)
        for c in nb.grade_cells:
            tmpl.update_or_create_grade_cell(
                c.name, nb.name, a.name, max_score=c.max_score, cell_type=c.cell_type
            )
        for c in nb.solution_cells:
            tmpl.update_or_create_solution_cell(c.name, nb.name, a.name)
        for c in nb.task_cells:
            tmpl.update_or_create_task_cell(
                c.name, nb.name, a.name, max_score=c.max_score, cell_type=c.cell_type
            )
        for c in nb.source_cells:
            tmpl.update_or_create_source_cell(
                c.name,
                nb.name,
                a.name,
                cell_type=c.cell_type,
                locked=c.locked,
                source=c.source,
                checksum=c.checksum,
            )


def grade_one(task: GradeTask) -> GradeOutcome:
    """Worker: nbgrader's Autograde for one student, against a private gradebook and directory."""
    _exit_if_stopping()
    started = time.monotonic()
    staging = Path(task.staging)
    staging.mkdir(parents=True, exist_ok=True)
    db = staging / "gradebook.db"
    shutil.copy(task.template_db, db)
    try:
        course = Course(Path(task.root), task.assignment)
        overrides: dict[str, object] = {
            "CourseDirectory.db_url": f"sqlite:///{db}",
            "CourseDirectory.autograded_directory": str(staging / "autograded"),
        }
        if task.unisolated:
            overrides["Isolation.required"] = False
        api = course.api(**overrides)
        try:
            policy.check(api.config)  # the autograde step would refuse too; say it in one line here
        except policy.IsolationUnavailable as exc:
            return GradeOutcome(task.student, False, str(staging), task.fingerprint, error=str(exc))
        with warnings.catch_warnings():
            from sqlalchemy.exc import SAWarning

            warnings.simplefilter("ignore", SAWarning)  # nbgrader's API trips SQLAlchemy's autoflush warning
            result = api.autograde(task.assignment, task.student, force=True, create=True)
        ok = bool(result.get("success"))
        return GradeOutcome(
            task.student,
            ok,
            str(staging),
            task.fingerprint,
            time.monotonic() - started,
            error="" if ok else _last_lines(result.get("error") or result.get("log") or ""),
            log=(result.get("log") or "")[-20000:],
        )
    except Exception:  # noqa: BLE001 (reported per student; the batch goes on)
        return GradeOutcome(
            task.student,
            False,
            str(staging),
            task.fingerprint,
            time.monotonic() - started,
            error=_last_lines(traceback.format_exc()),
        )
    finally:
        from .execute import close_runner

        close_runner()  # this student's sandboxed notebook runner (also when the worker is told to stop)
        _exit_if_stopping()


def _last_lines(text: str, n: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-n:])


# --------------------------------------------------------------------------------------------
# The single writer (pe_course.writer): staged per student, committed in batches
# --------------------------------------------------------------------------------------------
def attention_reasons(course: Course, student: str) -> list[str]:
    """Why a graded student needs an instructor's look (see ``record.notebook_attention``)."""
    submitted = course.submitted / student / course.assignment
    graded = course.autograded / student / course.assignment
    reasons = []
    for name in sorted(course_notebooks(course)):
        for found in notebook_attention(submitted, graded, student, name)[1]:
            reasons.append(
                f"{name}: {found.kind}: {found.detail[:160]}" if found.detail else f"{name}: {found.kind}"
            )
    return list(dict.fromkeys(reasons))


def graded_unisolated(course: Course, student: str) -> bool:
    """Whether any record of this student says it was graded without bubblewrap (the opt-in)."""
    from .record import GradingRecord

    for path in sorted((course.autograded / student / course.assignment).glob("*.grading.json")):
        with contextlib.suppress(OSError, ValueError):
            if GradingRecord.read(path).unisolated:
                return True
    return False


def course_notebooks(course: Course) -> list[str]:
    return [p.stem for p in sorted(course.release.glob("*.ipynb"))]


# --------------------------------------------------------------------------------------------
# A grading round
# --------------------------------------------------------------------------------------------
def local_executor(jobs: int) -> cf.Executor:
    """Local worker processes (fresh interpreters: nothing inherited from the caller)."""
    return cf.ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start
    )


@contextlib.contextmanager
def _started_without_sigint():
    """Workers are started with SIGINT ignored (inherited from birth, before they import anything):
    the terminal's Ctrl-C reaches the whole process group, but only the main process should act on
    it; it then stops the workers with SIGTERM."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _worker_start() -> None:
    """In each worker: the first SIGTERM unwinds like an exception, so its sandboxes and scratch
    directories are cleaned up; later ones are ignored so that nothing interrupts that cleanup."""
    signal.signal(signal.SIGTERM, _stop_worker)
    # Workers never write to the terminal (the main process owns it: progress bar, summary); what
    # nbgrader logs for a student comes back in that student's outcome.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    warnings.filterwarnings("ignore", module="nbformat")  # students' notebooks often lack cell ids


_STOPPING: list[int] = []  # set in a worker that was told to stop


def _stop_worker(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STOPPING.append(signum)
    sys.exit(128 + signum)


def _exit_if_stopping() -> None:
    """nbgrader swallows SystemExit (a bare ``except:`` in its API): once the unwinding has cleaned up,
    a worker told to stop leaves for good instead of taking the next queued student."""
    if _STOPPING:
        os._exit(128 + _STOPPING[0])


def stop_workers(executor: cf.Executor) -> None:
    """End a pool at once (Ctrl-C, SIGTERM): queued tasks dropped, running workers told to stop and
    given time to end their sandboxes, then killed."""
    executor.shutdown(wait=False, cancel_futures=True)
    workers = multiprocessing.active_children()
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + 15
    for worker in workers:
        worker.join(max(0.1, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join(5)


def submitted_students(course: Course) -> list[str]:
    folder = course.submitted
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / course.assignment).is_dir())


def grade_round(
    course: Course,
    students: Iterable[str] | None = None,
    jobs: int = 2,
    force: bool = False,
    executor_factory: Callable[[int], cf.Executor] = local_executor,
    on_event: Callable[[str, str, RoundSummary], None] | None = None,
    cluster=None,
    feedback: bool = False,
    unisolated: bool = False,
) -> RoundSummary:
    """Grade submissions in parallel; merge each as it finishes; skip unchanged ones unless ``force``.

    ``on_event(kind, student, summary)`` is called with kind in {"start", "skipped", "graded",
    "failed", "feedback"}, and "start" / "feedback-owed" with the number of students to grade / of
    skipped students whose feedback is missing in place of a student (the progress display hooks in here). Ctrl-C stops the workers; what was
    merged stays merged. With ``feedback``, each student's feedback is generated as soon as their
    grades are merged, by the same workers ("feedback" event; failures in ``summary.feedback_failed``).
    With ``cluster`` (a ``distributed.Client``, see :mod:`pe_course.cluster`) the same per-student
    tasks run on a Dask cluster instead of local processes; merging stays here either way, and each
    worker sends its student's feedback pages with the grades (only a student with earlier manual
    scores gets pages made here, after the round). ``unisolated`` is the instructor's opt-in
    (trusted code only): without it a worker where bubblewrap does not work refuses every student.
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
    state = GradeState(course)
    graders = graders_fingerprint(course)
    work_dir = course.state_dir / "work" / uuid.uuid4().hex[:8]
    work_dir.mkdir(parents=True, exist_ok=True)
    groups.sweep_stale()  # what an earlier round killed with SIGKILL could not remove itself
    tasks = []
    try:
        template = build_template(course, work_dir / "template.db")
        for student in chosen:
            fingerprint = submission_fingerprint(course, student, graders)
            already = (course.autograded / student / course.assignment).is_dir()
            if not force and already and state.get(student) == fingerprint:
                summary.skipped.append(student)
                notify("skipped", student, summary)
                continue
            tasks.append(
                GradeTask(
                    str(course.root),
                    course.assignment,
                    student,
                    str(template),
                    str(work_dir / student),
                    fingerprint,
                    unisolated,
                )
            )
        # a student skipped as unchanged whose feedback is missing (the round that graded them was
        # interrupted before it) gets it in this round
        owed = (
            [s for s in summary.skipped if not (course.feedback / s / course.assignment).is_dir()]
            if feedback
            else []
        )
        notify("start", str(len(tasks)), summary)
        notify("feedback-owed", str(len(owed)), summary)
        if tasks or (owed and cluster is None):
            with GradebookWriter(course) as writer:
                if cluster is not None:
                    from .cluster import run_on_cluster

                    run_on_cluster(cluster, writer, tasks, template, state, summary, notify, feedback)
                else:
                    _run_tasks(writer, tasks, jobs, executor_factory, state, summary, notify, feedback, owed)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            (course.state_dir / "work").rmdir()
    if feedback and cluster is not None and (set(summary.graded) - set(summary.feedback) or owed):
        started_feedback = time.monotonic()

        def feedback_done(student: str, ok: bool, error: str) -> None:
            _feedback_done(summary, notify, student, ok, error)

        # the workers made each student's pages with their grades; only the rest is made here (a
        # student with manual scores from before, whose pages need them; a worker's failure; owed)
        here = [s for s in summary.graded if s not in summary.feedback] + owed
        feedback_round(course, here, jobs, executor_factory, feedback_done)
        summary.feedback_seconds = time.monotonic() - started_feedback
    for student in summary.skipped:  # graded before and unchanged: their records still speak
        reasons = attention_reasons(course, student)
        if reasons:
            summary.attention[student] = reasons
    summary.seconds = time.monotonic() - started
    return summary


def _run_tasks(
    writer, tasks, jobs, executor_factory, state, summary, notify, feedback: bool, owed: list[str]
) -> None:
    """Grade ``tasks`` on local workers, merging each result as it comes; with ``feedback``, each
    merged student's feedback is the next job for the same workers. Jobs are handed out a few at a
    time, so that a student's feedback is not queued behind the whole class."""
    course = writer.course
    to_grade = list(tasks)
    to_feedback: list[str] = list(owed)  # students whose feedback is due
    retried: set[str | GradeTask] = set()  # jobs that were running or queued when a pool broke

    def requeue(job: GradeTask | str) -> None:
        (to_grade if isinstance(job, GradeTask) else to_feedback).append(job)  # type: ignore[arg-type]

    while to_grade or to_feedback:
        with _started_without_sigint():  # submit() starts the worker processes
            executor = executor_factory(jobs)
        running: dict[cf.Future, GradeTask | str] = {}  # a grading task, or a student's feedback
        broken = False
        try:
            while not broken and (to_grade or to_feedback or running):
                while (to_feedback or to_grade) and len(running) < 2 * jobs:
                    with _started_without_sigint():
                        if to_feedback:
                            student = to_feedback.pop(0)
                            future = executor.submit(
                                feedback_one, str(course.root), course.assignment, student
                            )
                            running[future] = student
                        else:
                            task = to_grade.pop(0)
                            running[executor.submit(grade_one, task)] = task
                done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    job = running.pop(future)
                    try:
                        result = future.result()
                    except cf.process.BrokenProcessPool:
                        broken = True  # a worker died (killed, out of memory); retry once in a new pool
                        requeue(job)
                        continue
                    except Exception as exc:  # noqa: BLE001
                        result = (
                            GradeOutcome(job.student, False, job.staging, job.fingerprint, error=repr(exc))
                            if isinstance(job, GradeTask)
                            else (job, False, repr(exc))
                        )
                    if not isinstance(job, GradeTask):
                        _feedback_done(summary, notify, *result)
                        continue
                    merged = finish(writer, result, state, summary, notify, settle_now=False)
                    if feedback:
                        to_feedback += merged
                merged = settle(writer, state, summary, notify)  # all results that were ready: one commit
                if feedback:
                    to_feedback += merged
        except BaseException:  # Ctrl-C, SIGTERM: what was merged stays, the rest is graded next time
            with contextlib.suppress(Exception):
                settle(writer, state, summary, notify)  # results already received are complete
            stop_workers(executor)
            raise
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
        if broken:
            for job in running.values():  # lost with the pool
                requeue(job)
            for job in [*to_grade, *to_feedback]:
                if job not in retried:
                    retried.add(job)
                elif isinstance(job, GradeTask):
                    to_grade.remove(job)
                    summary.failed[job.student] = "grading worker died twice"
                    notify("failed", job.student, summary)
                else:
                    to_feedback.remove(job)
                    _feedback_done(summary, notify, job, False, "feedback worker died twice")


def _feedback_done(summary: RoundSummary, notify, student: str, ok: bool, error: str) -> None:
    if ok:
        summary.feedback.append(student)
    else:
        summary.feedback_failed[student] = error or "generate_feedback failed"
    notify("feedback", student, summary)


def finish(
    writer: GradebookWriter,
    outcome: GradeOutcome,
    state: GradeState,
    summary: RoundSummary,
    notify,
    settle_now: bool = True,
) -> list[str]:
    """Take one worker's result: staged in the gradebook's open transaction, committed now (or, with
    ``settle_now=False``, with the next :func:`settle`, once nothing else is ready). Returns the
    students merged by this call."""
    if not outcome.ok:
        summary.failed[outcome.student] = outcome.error or "nbgrader autograde failed"
        state.set(outcome.student, None)
        notify("failed", outcome.student, summary)
        return settle(writer, state, summary, notify) if settle_now else []
    started = time.monotonic()
    try:
        writer.stage(outcome)
    except Exception as exc:  # noqa: BLE001
        summary.failed[outcome.student] = f"could not write the gradebook: {exc}"
        state.set(outcome.student, None)
        notify("failed", outcome.student, summary)
    finally:
        summary.merge_seconds += time.monotonic() - started
    return settle(writer, state, summary, notify) if settle_now or writer.full else []


def settle(writer: GradebookWriter, state: GradeState, summary: RoundSummary, notify) -> list[str]:
    """Commit every staged student (one transaction), then record them as merged: the resumable state,
    attention, the "graded" event. Returns the students merged."""
    started = time.monotonic()
    merged, failed = writer.commit()
    for outcome in merged:
        state.set(outcome.student, outcome.fingerprint)
    summary.merge_seconds += time.monotonic() - started
    for student, why in failed.items():
        summary.failed[student] = why
        state.set(student, None)
        notify("failed", student, summary)
    for outcome in merged:
        summary.graded.append(outcome.student)
        reasons = attention_reasons(writer.course, outcome.student)
        if reasons:
            summary.attention[outcome.student] = reasons
        notify("graded", outcome.student, summary)
        if outcome.feedback:  # made on a cluster worker, moved into place with the grades
            _feedback_done(summary, notify, outcome.student, True, "")
    return [outcome.student for outcome in merged]


# --------------------------------------------------------------------------------------------
# Feedback (read-only on the gradebook, so it runs in parallel safely)
# --------------------------------------------------------------------------------------------
def feedback_one(
    root: str, assignment: str, student: str, overrides: dict[str, object] | None = None
) -> tuple[str, bool, str]:
    """nbgrader generate_feedback (forced: manual grades given since are included), then only the
    pages the student should get are kept. ``overrides``: nbgrader settings (a worker's private
    gradebook and autograded folder)."""
    _exit_if_stopping()
    course = Course(Path(root), assignment)
    try:
        result = course.api(**(overrides or {})).generate_feedback(assignment, student, force=True)
        tidy(course, student)
    except Exception:  # noqa: BLE001
        return student, False, _last_lines(traceback.format_exc())
    return student, bool(result.get("success")), _last_lines(result.get("error") or "")


def feedback_round(
    course: Course,
    students: Iterable[str],
    jobs: int = 2,
    executor_factory: Callable[[int], cf.Executor] = local_executor,
    on_done: Callable[[str, bool, str], None] | None = None,
) -> dict[str, str]:
    """nbgrader generate_feedback for each student, in parallel; returns failures (student -> why)."""
    failures: dict[str, str] = {}
    students = list(students)
    if not students:
        return failures
    with _started_without_sigint():
        executor = executor_factory(jobs)
        futures = [executor.submit(feedback_one, str(course.root), course.assignment, s) for s in students]
    try:
        for future in cf.as_completed(futures):
            student, ok, error = future.result()
            if not ok:
                failures[student] = error or "generate_feedback failed"
            if on_done:
                on_done(student, ok, failures.get(student, ""))
    except BaseException:
        stop_workers(executor)
        raise
    executor.shutdown(wait=True)
    return failures


def score_table(course: Course) -> tuple[list[str], list[tuple[str, list[float | None], float, float, int]]]:
    """(notebooks, rows of (student, score per notebook, total, max, written answers awaiting a
    grader)) from the course gradebook."""
    from .export import pending_manual_grades

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

"""One student's grading task: what a worker runs, on this machine or on a Dask worker.

:func:`grade_one` runs nbgrader's own ``Autograde`` app for one student against a *private* SQLite
gradebook (a template holding only the assignment's structure, :func:`build_template`) and a private
staging directory; with ``feedback`` it then makes the student's feedback pages there, from that
private gradebook (the grades just given). It never touches the course gradebook: the round's single
writer (:mod:`pe_course.round.writer`) merges what it leaves in staging and moves the files into place.

:func:`feedback_one` makes a student's pages from the *course* gradebook instead: a student who
already had manual scores (the private gradebook lacks them), one whose pages a round still owes, and
everyone after manual grading (``pe-course feedback``). It only reads the gradebook, so any number
run at once.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sqlite3
import time
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..course import Course
from ..sandbox import policy, selftest
from ..steps.execute import close_runner
from ..steps.feedback_pages import tidy


@dataclass(frozen=True)
class GradeTask:
    root: str
    assignment: str
    student: str
    template_db: str
    staging: str
    fingerprint: str
    unisolated: bool = False  # the instructor's opt-in: grade even where bubblewrap does not work
    feedback: bool = False  # also make the student's feedback pages, with the grades
    ungrouped: bool = False  # the instructor's opt-in: grade even where no resource group can be made


@dataclass
class GradeOutcome:
    student: str
    ok: bool
    staging: str
    fingerprint: str
    seconds: float = 0.0
    error: str = ""
    log: str = ""
    feedback: bool = False  # the staging folder holds this student's feedback pages


@dataclass(frozen=True)
class FeedbackTask:
    """A student's feedback pages from the course gradebook."""

    root: str
    assignment: str
    student: str


@dataclass
class FeedbackOutcome:
    student: str
    ok: bool
    error: str = ""
    seconds: float = 0.0


def run_task(task: GradeTask | FeedbackTask) -> GradeOutcome | FeedbackOutcome:
    """What a local worker process runs for any task of a round."""
    return grade_one(task) if isinstance(task, GradeTask) else feedback_one(task)


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


@contextlib.contextmanager
def private_gradebook(template: Path, staged: Path) -> Iterator[Path]:
    """A student's private gradebook, a copy of the template, at ``staged`` once the block ends.

    While the student is graded it sits at one path per worker process (beside the template), whose
    SQLAlchemy engine this process keeps from one student to the next: nbgrader opens the gradebook a
    dozen times per student, each time with a new engine that compiles every query again (about a
    fifth of the grading process's time for a one-notebook student). Only this process writes the
    file (students' code runs in the sandbox); the engine's connections are closed before the file
    is moved to ``staged``, and an engine with a connection still in use (a transaction left open) is
    not kept. nbgrader opens every gradebook in a ``with`` block and its apps do not outlive a
    student, so nothing of one student's reaches the next one's file.
    """
    path = template.with_name(f"private-{os.getpid()}.db")
    shutil.copy(template, path)
    url = f"sqlite:///{path}"
    _keep_engine(url)
    try:
        yield path
    finally:
        engine = _KEPT.get(url)
        if engine is not None:
            if engine.pool.checkedout():  # a gradebook left open: never reuse what still points here
                del _KEPT[url]
            engine.dispose()
        os.replace(path, staged)


_KEPT: dict[str, Any] = {}  # the private gradebook's URL -> its engine, in this process


def _keep_engine(url: str) -> None:
    """nbgrader's ``create_engine`` gives the kept engine for ``url`` (made at its first use); other
    URLs (the course gradebook) get new engines as before. At most one URL is kept per process."""
    import nbgrader.api

    original = getattr(nbgrader.api.create_engine, "__wrapped__", nbgrader.api.create_engine)

    @functools.wraps(original)
    def create_engine(db_url, *args, **kwargs):
        if str(db_url) != url:
            return original(db_url, *args, **kwargs)
        if url not in _KEPT:
            _KEPT[url] = original(db_url, *args, **kwargs)
        return _KEPT[url]

    for other in [u for u in _KEPT if u != url]:
        _KEPT.pop(other).dispose()
    nbgrader.api.create_engine = create_engine


# --------------------------------------------------------------------------------------------
# The tasks
# --------------------------------------------------------------------------------------------
def grade_one(task: GradeTask) -> GradeOutcome:
    """nbgrader's Autograde for one student, against a private gradebook and directory; with
    ``task.feedback`` the student's pages too, in ``staging/feedback/<student>/<assignment>/``."""
    started = time.monotonic()
    staging = Path(task.staging)
    staging.mkdir(parents=True, exist_ok=True)
    with private_gradebook(Path(task.template_db), staging / "gradebook.db") as db:
        return _grade(task, staging, db, started)


def _grade(task: GradeTask, staging: Path, db: Path, started: float) -> GradeOutcome:
    try:
        course = Course(Path(task.root), task.assignment)
        overrides: dict[str, object] = {
            "CourseDirectory.db_url": f"sqlite:///{db}",
            "CourseDirectory.autograded_directory": str(staging / "autograded"),
            "CourseDirectory.feedback_directory": str(staging / "feedback"),
        }
        if task.unisolated:
            overrides["Isolation.required"] = False
        if task.ungrouped:
            overrides["Isolation.resource_groups_required"] = False
        api = course.api(**overrides)
        try:
            selftest.check(api.config)  # the autograde step would refuse too; say it in one line here
        except policy.IsolationUnavailable as exc:
            return GradeOutcome(task.student, False, str(staging), task.fingerprint, error=str(exc))
        with warnings.catch_warnings():
            from sqlalchemy.exc import SAWarning

            warnings.simplefilter("ignore", SAWarning)  # nbgrader's API trips SQLAlchemy's autoflush warning
            result = api.autograde(task.assignment, task.student, force=True, create=True)
        ok = bool(result.get("success"))
        outcome = GradeOutcome(
            task.student,
            ok,
            str(staging),
            task.fingerprint,
            error="" if ok else _last_lines(result.get("error") or result.get("log") or ""),
            log=(result.get("log") or "")[-20000:],
        )
        if ok and task.feedback:
            outcome.feedback = _pages(api, Course(staging, task.assignment), task.student)
        outcome.seconds = time.monotonic() - started
        return outcome
    except Exception:  # noqa: BLE001 (reported per student; the round goes on)
        return GradeOutcome(
            task.student,
            False,
            str(staging),
            task.fingerprint,
            time.monotonic() - started,
            error=_last_lines(traceback.format_exc()),
        )
    finally:
        close_runner()  # this student's sandboxed notebook runner


def _pages(api, staged: Course, student: str) -> bool:
    """nbgrader generate_feedback from the private gradebook into the staging folder (laid out as a
    course directory), tidied as every student's pages are; whether the pages are there. A failure
    here costs only the pages: the round makes them again from the course gradebook."""
    try:
        made = api.generate_feedback(staged.assignment, student, force=True).get("success")
        tidy(staged, student)
    except Exception:  # noqa: BLE001 (see above)
        return False
    return bool(made) and (staged.feedback / student / staged.assignment).is_dir()


def feedback_one(task: FeedbackTask) -> FeedbackOutcome:
    """nbgrader generate_feedback from the course gradebook (forced: manual grades given since are
    included), then only the pages the student should get are kept."""
    started = time.monotonic()
    course = Course(Path(task.root), task.assignment)
    try:
        result = course.api().generate_feedback(task.assignment, task.student, force=True)
        tidy(course, task.student)
    except Exception:  # noqa: BLE001 (reported per student; the others go on)
        return FeedbackOutcome(task.student, False, _last_lines(traceback.format_exc()))
    return FeedbackOutcome(
        task.student,
        bool(result.get("success")),
        _last_lines(result.get("error") or ""),
        time.monotonic() - started,
    )


def _last_lines(text: str, n: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-n:])

"""Parallel grading: same gradebook as serial nbgrader, resumable, skips unchanged submissions."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import CourseCopy, reference_nb, release_nb, with_code
from sqlalchemy import text

from pe_course.round.grade import grade_round
from pe_course.round.resume import GradeState
from pe_course.round.task import build_template, private_gradebook
from pe_course.runners.local import LocalRunner

pytestmark = pytest.mark.slow

WRONG_PE = """def positional_encoding(length, d_model, base=10000.0):
    angle = np.arange(length)[:, None] * base ** (-np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angle), np.sin(angle)
    return pe"""

# Two notebooks per student keep the suite fast; the others are "missing" (scored 0 by nbgrader).
CLASS = {
    "ani": {"01_embedding": reference_nb("01_embedding"), "02_sinusoidal": reference_nb("02_sinusoidal")},
    "budi": {"01_embedding": release_nb("01_embedding"), "02_sinusoidal": release_nb("02_sinusoidal")},
    "citra": {
        "01_embedding": reference_nb("01_embedding"),
        "02_sinusoidal": with_code(reference_nb("02_sinusoidal"), "positional_encoding", WRONG_PE),
    },
    "dewi": {"02_sinusoidal": reference_nb("02_sinusoidal")},
}


def _submit_class(copy):
    for student, notebooks in CLASS.items():
        copy.submit(student, notebooks)


@pytest.fixture(scope="module")
def serial(_course_template, tmp_path_factory) -> CourseCopy:
    """The class graded by stock ``nbgrader autograde`` (one student after the other), once for the
    tests that compare a round's gradebook with it (nobody writes to it afterwards)."""
    root = tmp_path_factory.mktemp("serial") / "course"
    shutil.copytree(_course_template, root)
    copy = CourseCopy(root)
    _submit_class(copy)
    copy.nbgrader("autograde", "positional-encoding", check=True)
    return copy


def test_parallel_grading_equals_serial_nbgrader(make_course, serial):
    parallel = make_course("parallel")
    _submit_class(parallel)
    summary = grade_round(parallel.course, LocalRunner(2))
    assert sorted(summary.graded) == sorted(CLASS) and not summary.failed
    expected = serial.scores()
    assert parallel.scores() == expected
    # and the graders really decided something: full, zero, partial
    assert expected[("ani", "02_sinusoidal", "test_positional_encoding")] == 3
    assert expected[("budi", "01_embedding", "test_embed")] == 0
    assert 0 < expected[("citra", "02_sinusoidal", "test_positional_encoding")] < 3
    # records are where nbgrader's autograde puts them
    record = parallel.record("citra", "02_sinusoidal")
    assert "sin-cos-swapped" in [m["id"] for m in record["cells"][1]["misconceptions"]]


def test_unchanged_submissions_are_skipped_and_changed_ones_regraded(course_copy):
    _submit_class(course_copy)
    first = grade_round(course_copy.course, LocalRunner(2))
    assert sorted(first.graded) == sorted(CLASS)
    again = grade_round(course_copy.course, LocalRunner(2))
    assert again.graded == [] and sorted(again.skipped) == sorted(CLASS)
    # budi fixes embed: only budi is graded again, and the new score lands in the gradebook
    course_copy.submit("budi", {"01_embedding": reference_nb("01_embedding")})
    third = grade_round(course_copy.course, LocalRunner(2))
    assert third.graded == ["budi"]
    assert course_copy.scores()[("budi", "01_embedding", "test_embed")] == 3
    forced = grade_round(course_copy.course, LocalRunner(1), students=["ani"], force=True)
    assert forced.graded == ["ani"] and forced.skipped == []


def test_each_students_feedback_follows_their_grades_and_missing_feedback_is_made_up(course_copy):
    _submit_class(course_copy)
    events = []
    summary = grade_round(
        course_copy.course,
        LocalRunner(2),
        feedback=True,
        on_event=lambda kind, who, _: events.append((kind, who)),
    )
    assert sorted(summary.feedback) == sorted(CLASS) and not summary.feedback_failed
    scores = course_copy.scores()
    for student, notebooks in CLASS.items():
        assert events.index(("graded", student)) < events.index(("feedback", student))
        pages = course_copy.root / "feedback" / student / "positional-encoding"
        assert sorted(p.name for p in pages.glob("*.html")) == [f"{nb}.html" for nb in sorted(notebooks)]
    # the page shows the merged score (partial for citra's swapped sin/cos)
    citra = scores[("citra", "02_sinusoidal", "test_positional_encoding")]
    page = (
        course_copy.root / "feedback" / "citra" / "positional-encoding" / "02_sinusoidal.html"
    ).read_text()
    assert f"Score: {float(citra)} / 3.0" in page  # as nbgrader writes it
    # a round stopped between budi's grades and his feedback: the next round makes it up
    shutil.rmtree(course_copy.root / "feedback" / "budi")
    again = grade_round(course_copy.course, LocalRunner(2), feedback=True)
    assert again.graded == [] and again.feedback == ["budi"]
    assert (course_copy.root / "feedback" / "budi" / "positional-encoding" / "01_embedding.html").is_file()


def test_the_workers_template_gradebook_is_made_without_running_alembic(course_copy, tmp_path, monkeypatch):
    """nbgrader stamps a new gradebook by running the `alembic` command (2.5 s before any worker can
    start); the template copies the course gradebook's schema version and structure instead."""
    import sqlite3

    course = course_copy.course
    with course.gradebook() as gb:
        version = gb.db.execute(text("SELECT version_num FROM alembic_version")).scalar()
        cells = sorted(
            (c.name, c.max_score)
            for nb in gb.find_assignment(course.assignment).notebooks
            for c in nb.grade_cells
        )
    monkeypatch.setenv("PATH", str(tmp_path))  # no `alembic` (nor anything else) to run
    path = build_template(course, tmp_path / "template.db")
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(version,)]
    with course.gradebook(f"sqlite:///{path}") as template:
        assignment = template.find_assignment(course.assignment)
        assert sorted((c.name, c.max_score) for nb in assignment.notebooks for c in nb.grade_cells) == cells
        assert assignment.submissions == []


def test_a_workers_private_gradebooks_share_one_engine_and_end_where_the_writer_reads_them(
    course_copy, tmp_path
):
    """A worker keeps the SQLAlchemy engine of its private gradebook from one student to the next
    (nbgrader's queries compiled once per worker, not once per gradebook opened); each student still
    starts from a fresh copy of the template, and ends in their own staging folder."""
    from nbgrader.api import Gradebook

    course = course_copy.course
    template = build_template(course, tmp_path / "template.db")
    engines = []
    for student in ("ani", "budi"):
        staged = tmp_path / student / "gradebook.db"
        staged.parent.mkdir()
        with private_gradebook(template, staged) as path:
            for _ in range(2):
                with Gradebook(f"sqlite:///{path}", course_id="pe-course") as gb:
                    assert [s.id for s in gb.students] == []  # the template's copy, not the last student's
                    engines.append(gb.engine)
            with Gradebook(f"sqlite:///{path}", course_id="pe-course") as gb:
                gb.update_or_create_student(student)
            with course.gradebook() as main:
                assert main.engine is not engines[0]  # the course gradebook is not concerned
        assert not path.exists()
        with Gradebook(f"sqlite:///{staged}", course_id="pe-course") as gb:
            assert [s.id for s in gb.students] == [student]
    assert all(engine is engines[0] for engine in engines)
    # a gradebook left in the middle of a transaction: its engine is not used again
    staged = tmp_path / "citra" / "gradebook.db"
    staged.parent.mkdir()
    with private_gradebook(template, staged) as path:
        left_open = Gradebook(f"sqlite:///{path}", course_id="pe-course")
        left_open.db.execute(text("SELECT 1"))  # holds a connection of the engine
    with (
        private_gradebook(template, tmp_path / "dewi.db") as path,
        Gradebook(f"sqlite:///{path}", course_id="pe-course") as gb,
    ):
        assert gb.engine is not left_open.engine
    left_open.close()


def test_ctrl_c_leaves_a_consistent_gradebook_and_the_next_run_resumes(make_course, serial):
    interrupted = make_course("interrupted")
    _submit_class(interrupted)

    def stop_after_first(kind, student, summary):
        if kind == "graded":
            raise KeyboardInterrupt  # what Ctrl-C raises in the main process

    with pytest.raises(KeyboardInterrupt):
        grade_round(interrupted.course, LocalRunner(2), on_event=stop_after_first)
    state = GradeState(interrupted.course).data
    assert len(state) == 1  # exactly the one merged student counts as graded
    done = next(iter(state))
    partial = interrupted.scores()
    assert {k: v for k, v in partial.items() if k[0] == done} == {
        k: v for k, v in serial.scores().items() if k[0] == done
    }
    resumed = grade_round(interrupted.course, LocalRunner(2))
    assert resumed.skipped == [done] and sorted(resumed.graded) == sorted(set(CLASS) - {done})
    assert interrupted.scores() == serial.scores()
    assert not (interrupted.root / ".pe-course" / "work").exists()


def test_killed_grading_process_resumes(course_copy):
    killed: set[int] = set()
    try:
        _killed_grading_process_resumes(course_copy, killed)
    finally:
        # Where the test failed before the next round swept them: SIGKILL leaves the killed round's scratch
        # directories and groups behind. Only theirs, by the pids in their names: the other xdist worker's
        # rounds run beside this one, and removing every new one (as this test did) took a live round's
        # scratch directory away (its notebook then failed with FileNotFoundError: test_robustness, beb17b6)
        from pe_course.sandbox import groups, leftovers, teardown

        for pid in killed:
            for path in teardown.leftovers_of(pid):
                shutil.rmtree(path, ignore_errors=True)
            leftovers.remove_left_by(pid, groups.mechanism())


def _session(sid: int) -> set[int]:
    """The processes of session ``sid`` now."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry)) == sid:
                    found.add(int(entry))
    return found


def _killed_grading_process_resumes(course_copy, killed: set[int]):
    _submit_class(course_copy)
    exe = os.path.join(os.path.dirname(sys.executable), "pe-course")
    proc = subprocess.Popen(
        [exe, "grade", "--jobs", "2"],
        cwd=course_copy.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if GradeState(course_copy.course).data:
            break
        time.sleep(0.2)
    killed |= _session(proc.pid)  # the grading process and its workers: who made what is left
    os.killpg(proc.pid, signal.SIGKILL)  # the whole tree, as a crash or `kill -9` would
    proc.wait()
    graded_before = set(GradeState(course_copy.course).data)
    assert graded_before, "the run was killed before it graded anyone"
    scores = course_copy.scores()  # the gradebook opens and reads fine
    assert all(any(k[0] == s for k in scores) for s in graded_before)
    resumed = grade_round(course_copy.course, LocalRunner(2))
    # the next round removed what the killed one left on this machine (sandbox.scratch.sweep_left_behind)
    from pe_course.sandbox import groups as cgroups
    from pe_course.sandbox import teardown

    mech = cgroups.mechanism()
    for pid in killed:
        assert not teardown.leftovers_of(pid), f"the killed round's scratch outlived the next round ({pid})"
        for parent in mech.parents.values() if mech is not None else []:
            assert not list(parent.glob(f"{teardown.PREFIX}{pid}-*")), "the killed round's groups outlived it"
    assert set(resumed.skipped) == graded_before
    assert set(resumed.graded) | graded_before == set(CLASS)
    assert course_copy.scores()[("ani", "01_embedding", "test_embed")] == 3


def test_unknown_student_and_broken_submission_do_not_stop_the_batch(course_copy):
    _submit_class(course_copy)
    course_copy.submit("eko", {"01_embedding": "{ not json", "02_sinusoidal": ""})
    summary = grade_round(course_copy.course, LocalRunner(2), students=["ani", "eko", "nobody"])
    assert sorted(summary.graded) == ["ani", "eko"]
    assert "nobody" in summary.failed
    assert any("unreadable-notebook" in why for why in summary.attention["eko"])
    assert course_copy.scores()[("ani", "01_embedding", "test_embed")] == 3

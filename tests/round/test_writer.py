"""The single gradebook writer: staged per student, committed in batches, all or nothing per student.

Results are synthetic (``tests/synthetic.py``: what a worker sends back, made with nbgrader's API);
the course gradebook is a real nbgrader gradebook read back with nbgrader's API.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from synthetic import prototype, synthetic

from pe_course.round.merge import finish, settle
from pe_course.round.resume import GradeState
from pe_course.round.summary import RoundSummary
from pe_course.round.writer import GradebookWriter

EVENTS: list[tuple[str, str]] = []


def notify(kind, student, summary):
    EVENTS.append((kind, student))


@pytest.fixture
def proto(course_copy, tmp_path):
    return prototype(course_copy.course, tmp_path)


def scores_of(course_copy, student):
    return {k[1:]: v for k, v in course_copy.scores().items() if k[0] == student}


def test_waiting_results_share_one_commit_and_each_is_merged_whole(course_copy, proto, tmp_path):
    course = course_copy.course
    outcomes = [synthetic(course, proto, s, tmp_path / "staging" / s) for s in ("ani", "budi", "citra")]
    state, summary = GradeState(course), RoundSummary()
    EVENTS.clear()
    with GradebookWriter(course) as writer:
        for outcome in outcomes:
            assert finish(writer, outcome, state, summary, notify, settle_now=False) == []
        assert summary.graded == [] and len(writer.pending) == 3
        with course.gradebook() as gb:  # another connection sees nothing before the commit
            assert gb.find_assignment(course.assignment).submissions == []
        assert settle(writer, state, summary, notify) == ["ani", "budi", "citra"]
    assert EVENTS == [("graded", "ani"), ("graded", "budi"), ("graded", "citra")]
    prototype_scores = scores_of(course_copy, "ani")
    assert prototype_scores and all(scores_of(course_copy, s) == prototype_scores for s in ("budi", "citra"))
    assert (course.autograded / "citra" / course.assignment / "04_similarity.grading.json").is_file()
    assert GradeState(course).data == {s: f"fingerprint-{s}" for s in ("ani", "budi", "citra")}


def test_a_bad_result_fails_alone_at_staging_and_at_the_commit(course_copy, proto, tmp_path):
    course = course_copy.course
    good = synthetic(course, proto, "ani", tmp_path / "s" / "ani")
    unknown_cell = synthetic(course, proto, "budi", tmp_path / "s" / "budi")
    with sqlite3.connect(f"{unknown_cell.staging}/gradebook.db") as con:  # a cell the course never had
        con.execute("UPDATE base_cell SET name = 'test_tidak_ada' WHERE name = 'test_embed'")
    refused = synthetic(course, proto, "eve", tmp_path / "s" / "eve")
    late = synthetic(course, proto, "citra", tmp_path / "s" / "citra")
    with sqlite3.connect(course.db_url.removeprefix("sqlite:///")) as con:  # the database refuses eve's rows
        con.execute(
            "CREATE TRIGGER refuse_eve BEFORE INSERT ON submitted_assignment WHEN NEW.student_id = 'eve' "
            "BEGIN SELECT RAISE(ABORT, 'eve refused'); END"
        )
    state, summary = GradeState(course), RoundSummary()
    with GradebookWriter(course) as writer:
        for outcome in (good, unknown_cell, refused, late):
            finish(writer, outcome, state, summary, notify, settle_now=False)
        assert "cells unknown to the course gradebook" in summary.failed["budi"]
        assert [item.outcome.student for item in writer.pending] == ["ani", "eve", "citra"]
        merged = settle(writer, state, summary, notify)
    assert merged == ["ani", "citra"]  # the batch's commit failed; retried one by one, only eve failed
    assert "eve refused" in summary.failed["eve"]
    with course.gradebook() as gb:
        ids = sorted(s.student.id for s in gb.find_assignment(course.assignment).submissions)
    assert ids == ["ani", "citra"]
    assert GradeState(course).data == {"ani": "fingerprint-ani", "citra": "fingerprint-citra"}
    assert not (course.autograded / "eve").exists()
    assert not (course.autograded / "budi").exists()


def test_a_regrade_updates_scores_and_keeps_the_manual_grades(course_copy, proto, tmp_path):
    course = course_copy.course
    state, summary = GradeState(course), RoundSummary()
    with GradebookWriter(course) as writer:
        finish(writer, synthetic(course, proto, "ani", tmp_path / "a1"), state, summary, notify)
    with course.gradebook() as gb:  # a grader scores the written answer in formgrader
        written = next(
            g
            for g in gb.find_submission(course.assignment, "ani").notebooks[0].grades
            if g.cell.cell_type == "markdown"
        )
        written.manual_score = 1.5
        embed = gb.find_grade("test_embed", "01_embedding", course.assignment, "ani")
        gb.db.commit()
    again = synthetic(course, proto, "ani", tmp_path / "a2")
    with sqlite3.connect(f"{again.staging}/gradebook.db") as con:  # the re-graded embed lost a point
        con.execute(
            "UPDATE grade SET auto_score = 2.0 WHERE cell_id = (SELECT id FROM base_cell WHERE name = 'test_embed')"
        )
    with GradebookWriter(course) as writer:
        finish(writer, again, state, summary, notify)
    with course.gradebook() as gb:
        embed = gb.find_grade("test_embed", "01_embedding", course.assignment, "ani")
        assert embed.auto_score == 2.0 and not embed.needs_manual_grade
        sub = gb.find_submission(course.assignment, "ani")
        written = next(g for g in sub.notebooks[0].grades if g.cell.cell_type == "markdown")
        assert (
            written.manual_score == 1.5 and written.needs_manual_grade
        )  # still needs a look, as SaveAutoGrades does
        assert len(gb.find_assignment(course.assignment).submissions) == 1


def test_the_state_is_a_log_a_torn_line_costs_one_regrade_and_the_old_file_is_read(course_copy):
    course = course_copy.course
    course.state_dir.mkdir(exist_ok=True)
    legacy = course.state_dir / f"{course.assignment}-grade-state.json"
    legacy.write_text(json.dumps({"ani": "f1", "budi": "f2"}), encoding="utf-8")
    state = GradeState(course)
    assert state.data == {"ani": "f1", "budi": "f2"} and not legacy.exists()
    state.set("citra", "f3")
    state.set("ani", None)
    state.set("ani", "f4")
    log = state.path.read_text(encoding="utf-8").splitlines()
    assert len(log) == 5 and json.loads(log[-1]) == {"student": "ani", "fingerprint": "f4"}
    with open(state.path, "a", encoding="utf-8") as fh:
        fh.write('{"student": "dedi", "finger')  # killed while writing
    again = GradeState(course)
    assert again.data == {"ani": "f4", "budi": "f2", "citra": "f3"}
    assert len(again.path.read_text(encoding="utf-8").splitlines()) == 3  # compacted when opened

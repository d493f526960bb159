"""The whole way through an LMS with the real apps: a Canvas or Moodle download taken in by
``nbgrader zip_collect``, graded, a written answer scored by hand, ``pe-course feedback`` and
``pe-course export --lms …``; the two files to upload parsed back with each importer's rules."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import pe_course, reference_nb
from lms_fixtures import (
    CANVAS_COLUMN,
    DUE_UTC,
    canvas_download,
    canvas_gradebook,
    moodle_download,
    moodle_worksheet,
)

from pe_course.round.grade import grade_round
from pe_course.runners.local import LocalRunner

GRADED = ["2306001", "2306002", "2306006"]  # Ani (on time), Çağla (late), Fajar (two notebooks)


def _nb(notebook: str) -> bytes:
    return nbformat.writes(reference_nb(notebook)).encode()


def _take_in_and_grade(course_copy, roster: Path, extra_config: str = "") -> None:
    config = course_copy.root / "nbgrader_config.py"
    config.write_text(
        config.read_text() + f"\nc.LmsFileNameCollector.rosters = [{roster.name!r}]\n{extra_config}"
    )
    course_copy.nbgrader("zip_collect", "positional-encoding", check=True)
    with course_copy.course.gradebook() as gb:
        gb.update_or_create_assignment("positional-encoding", duedate=DUE_UTC)
    grade_round(course_copy.course, LocalRunner(2), students=GRADED)
    with course_copy.course.gradebook() as gb:  # a grader scores the written answers of Ani and Çağla
        for sid in GRADED[:2]:
            for nb in gb.find_submission("positional-encoding", sid).notebooks:
                for grade in nb.grades:
                    if grade.needs_manual_grade:
                        grade.manual_score = 1.5
                        grade.needs_manual_grade = False  # as formgrader's API does on a score
        gb.db.commit()
    proc = pe_course(course_copy.root, "feedback", "positional-encoding")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _final_of(course_copy) -> dict[str, float]:
    with course_copy.course.gradebook() as gb:
        out = {}
        for sid in GRADED[:2]:
            sub = gb.find_submission("positional-encoding", sid)
            out[sid] = max(0.0, sub.score - sub.late_submission_penalty)
        return out


def test_canvas_round_ends_with_a_gradebook_import_and_a_comments_zip(course_copy):
    archive = course_copy.root / "downloaded" / "positional-encoding" / "archive" / "canvas.zip"
    canvas_download(archive, _nb)
    export = canvas_gradebook(course_copy.root / "canvas-export.csv", ";", bom=True)
    _take_in_and_grade(course_copy, export)
    proc = pe_course(
        course_copy.root, "export", "positional-encoding", "--lms", "canvas", "--from", export.name
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    folder = course_copy.root / "exports" / "positional-encoding"
    text = (folder / "canvas-grades-import.csv").read_bytes().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
    col = rows[0].index(CANVAS_COLUMN)
    scores = {r[2]: r[col] for r in rows[2:]}
    finals = _final_of(course_copy)
    for sid, score in finals.items():
        assert float(scores[sid]) == round(score, 2), (sid, scores)
    assert (  # never a blank cell: Canvas would clear the grade it holds
        "2306006" not in scores
        and "Nugroho, Fajar (2306006): left out, Canvas keeps its grade" in out
        and "written answer(s) not graded yet" in out
    )
    assert all(v.strip() for v in scores.values())
    assert "Wijaya, Hadi (Canvas ID 1008): not in nbgrader's gradebook: left out" in out
    assert "2306002: LATE per Canvas's _LATE flag" in out and "sent WITHOUT a late penalty" in out
    assert "Upload to Canvas: Grades → Import" in out and "Re-Upload Submissions" in out
    from pe_course.report.collect import collect

    late = {i.student: i.detail for i in collect(course_copy.course).issues if i.kind == "late"}
    assert list(late) == ["2306002"] and late["2306002"].startswith("marked late by Canvas")
    names = zipfile.ZipFile(folder / "canvas-feedback.zip").namelist()
    users = {[p for p in n.split("_") if re.fullmatch(r"\d+", p)][0] for n in names}
    assert users == {"1001", "1002", "1006"}
    assert all(("_LATE_" in n) == ("_1002_" in n) for n in names)
    cells = list(csv.DictReader((folder / "cell-points.csv").open(encoding="utf-8")))
    assert {r["student_id"] for r in cells} == set(GRADED)
    assert sum(float(r["score"]) for r in cells if r["student_id"] == "2306001") == pytest.approx(
        finals["2306001"]
    )


def test_moodle_round_ends_with_the_worksheet_and_a_feedback_zip_after_the_late_penalty(course_copy):
    archive = course_copy.root / "downloaded" / "positional-encoding" / "archive" / "moodle.zip"
    moodle_download(archive, _nb, version=4)
    worksheet = moodle_worksheet(course_copy.root / "worksheet.csv")
    _take_in_and_grade(course_copy, worksheet, 'c.LateSubmissionPlugin.penalty_method = "zero"\n')
    finals = _final_of(course_copy)
    with course_copy.course.gradebook() as gb:  # Çağla late by the worksheet's time, Ani not
        penalty = {
            s: gb.find_submission("positional-encoding", s).late_submission_penalty for s in GRADED[:2]
        }
    assert penalty["2306001"] == 0 < penalty["2306002"]
    proc = pe_course(
        course_copy.root, "export", "positional-encoding", "--lms", "moodle", "--from", worksheet.name
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = course_copy.root / "exports" / "positional-encoding"
    text = (folder / "moodle-grading-worksheet.csv").read_bytes().decode("utf-8-sig")
    rows = {r["Identifier"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}
    assert float(rows["Participant 101"]["Grade"]) == round(finals["2306001"], 2)
    assert float(rows["Participant 102"]["Grade"]) == round(finals["2306002"], 2)
    assert rows["Participant 106"]["Grade"] == "" and rows["Participant 108"]["Grade"] == ""
    assert "Fajar Nugroho (Participant 106) = 2306006: grade left as downloaded" in proc.stdout
    penalty_line = "2306002: late per Moodle grading worksheet"
    assert penalty_line in proc.stdout and "nbgrader's late penalty of" in proc.stdout
    assert proc.stdout.index("Upload grading worksheet") < proc.stdout.index("Upload multiple feedback files")
    folders = {n.split("/")[0] for n in zipfile.ZipFile(folder / "moodle-feedback.zip").namelist()}
    assert {f.split("_", 4)[1] for f in folders} == {"101", "102", "106"}
    assert "Çağla Yılmaz_102_assignsubmission_file" in folders

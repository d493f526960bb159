"""``pe-course export`` on a real nbgrader (SQLite) gradebook with identities from an intake: what
belongs elsewhere is refused in one line before anything is written (the previous export stays byte
for byte, no temporary folder is left), and a missing student stops the export unless allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from lms_fixtures import (
    CLASS,
    canvas_download,
    canvas_gradebook,
    moodle_download,
    moodle_participants,
    moodle_worksheet,
)
from test_lms import _content, _plan

from pe_course.course import Course
from pe_course.lms import identities as ids
from pe_course.lms.grades import ExportError
from pe_course.lms.roster import read_table, write_table
from pe_course.lms.upload import export

A = "positional-encoding"


def _course(tmp_path: Path, lms: str) -> Course:
    from nbgrader.api import Gradebook

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}", course_id="default_course") as gb:
        gb.add_assignment(A)
        for s in CLASS:
            gb.add_student(s.npm)
    if lms == "canvas":
        plan = _plan(
            canvas_download(tmp_path / "c.zip", _content), [canvas_gradebook(tmp_path / "roster.csv")]
        )
    else:
        plan = _plan(
            moodle_download(tmp_path / "m.zip", _content), [moodle_worksheet(tmp_path / "roster.csv")]
        )
    ids.save(tmp_path, A, plan.identities)
    return Course(tmp_path, A)


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _edited(path: Path, change) -> Path:
    table = read_table(path)
    change(table)
    return write_table(table, path)


def _other_course(table) -> None:
    for row in table.rows[2:]:
        row[0], row[1], row[2], row[3] = f"Lain, {row[1]}", str(int(row[1]) + 5000), "99" + row[2], "x@y"


def _another_assignment(table) -> None:
    for row in table.rows[1:]:
        row[0] = f"Participant {int(row[0].split()[1]) + 400}"


def _numbers_swapped(table) -> None:  # another assignment whose numbers happen to be this one's
    table.rows[1][0], table.rows[2][0] = table.rows[2][0], table.rows[1][0]


def _drop_first_student(table) -> None:
    del table.rows[2]


def test_canvas_refusals_leave_the_previous_export_whole(tmp_path):
    course = _course(tmp_path, "canvas")
    out = tmp_path / "exports"
    files, _ = export(course, "canvas", canvas_gradebook(tmp_path / "export.csv"), out)
    assert [f.name for f in files] == ["canvas-grades-import.csv", "canvas-feedback.zip", "cell-points.csv"]
    before = _snapshot(out)
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    (tmp_path / "roster.txt").write_text("NPM,Nama\n2306001,Ani\n", encoding="utf-8")
    no_points = _edited(canvas_gradebook(tmp_path / "np.csv"), lambda t: t.rows.pop(1))
    renumbered = _edited(
        canvas_gradebook(tmp_path / "renum.csv"),
        lambda t: t.rows[0].__setitem__(5, "Positional Encoding (9876)"),
    )
    bad = {  # file given with --from -> the one line it is refused with
        moodle_worksheet(tmp_path / "ws.csv"): "is a Moodle grading worksheet, not a Canvas gradebook export (--lms moodle?)",
        moodle_participants(tmp_path / "p.csv"): "is a Moodle participants list (a roster, not a gradebook)",
        tmp_path / "roster.txt": "is a class roster or another CSV (not an LMS gradebook)",
        tmp_path / "empty.csv": "empty file",
        _edited(canvas_gradebook(tmp_path / "other.csv"), _other_course): "none of the 7 students of nbgrader's "
        "gradebook is in other.csv: an export of another course or class?",
        renumbered: "is not Canvas assignment 4321, where earlier grades of positional-encoding went",
        no_points: "no '    Points Possible' row",
        _edited(canvas_gradebook(tmp_path / "miss.csv"), _drop_first_student): "1 student(s) of nbgrader's "
        "gradebook not in miss.csv: 2306004; export again from the LMS, or give --allow-missing",
    }  # fmt: skip
    for source, message in bad.items():
        with pytest.raises(ExportError) as caught:
            export(course, "canvas", source, out)
        assert message in str(caught.value) and "\n" not in str(caught.value), source.name
        assert _snapshot(out) == before, source.name
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".exports-")]
    files, notes = export(course, "canvas", tmp_path / "miss.csv", out, allow_missing=True)
    assert "2306004: in nbgrader's gradebook, not in miss.csv: nothing sent" in notes
    files, notes = export(course, "canvas", renumbered, out, column="9876")  # said explicitly: accepted
    assert read_table(files[0]).header[-1] == "Positional Encoding (9876)"


def test_moodle_refusals_another_assignment_and_another_lms(tmp_path):
    course = _course(tmp_path, "moodle")
    out = tmp_path / "exports"
    export(course, "moodle", moodle_worksheet(tmp_path / "ws.csv"), out)
    before = _snapshot(out)
    bad = {
        _edited(moodle_worksheet(tmp_path / "other.csv"), _another_assignment): "not the worksheet of "
        "positional-encoding: Moodle numbers participants per assignment and Ani Lestari (Participant 501) is "
        "Participant 101 in the download taken in (and 6 more)",
        _edited(moodle_worksheet(tmp_path / "swap.csv"), _numbers_swapped): "not the worksheet of "
        "positional-encoding: Moodle numbers participants per assignment and Ani Lestari (Participant 102) "
        "(ID number 2306001) is 2306002 in the download taken in (and 1 more)",
        canvas_gradebook(tmp_path / "gb.csv"): "is a Canvas gradebook export, not a Moodle grading worksheet (--lms canvas?)",
    }  # fmt: skip
    for source, message in bad.items():
        with pytest.raises(ExportError) as caught:
            export(course, "moodle", source, out)
        assert message in str(caught.value), str(caught.value)
        assert _snapshot(out) == before
    with pytest.raises(ExportError, match="taken in from a Moodle download, not Canvas"):
        export(course, "canvas", canvas_gradebook(tmp_path / "gb.csv"), out)
    assert _snapshot(out) == before


def test_a_late_student_is_penalised_or_named_the_same_way_for_both_lmss(tmp_path):
    from test_lms import FINALS

    from pe_course.lms.grades import Final
    from pe_course.lms.upload import _late_notes

    canvas_ids = _plan(canvas_download(tmp_path / "c.zip", _content), [canvas_gradebook(tmp_path / "g.csv")])
    moodle_ids = _plan(moodle_download(tmp_path / "m.zip", _content), [moodle_worksheet(tmp_path / "w.csv")])
    unpenalised = {**FINALS, "2306002": Final("2306002", 19.5, FINALS["2306002"].max_score)}
    for lms, identities in (("canvas", canvas_ids.identities), ("moodle", moodle_ids.identities)):
        (line,) = _late_notes(lms, FINALS, identities, set())
        assert line.startswith("2306002: late per ") and "late penalty of 2 point(s) applied" in line
        (line,) = _late_notes(lms, unpenalised, identities, set())
        assert "2306002: LATE per " in line and "sent WITHOUT a late penalty" in line
    assert (
        "(no submission time from the LMS)"
        in _late_notes("canvas", unpenalised, canvas_ids.identities, set())[0]
    )
    assert "(nbgrader's penalty is 0)" in _late_notes("moodle", unpenalised, moodle_ids.identities, set())[0]
    # a Moodle file's own Status names a student the intake did not mark late
    (line,) = _late_notes("moodle", unpenalised, {}, {"2306002"})
    assert "LATE per the Moodle file's Status" in line

"""The LMS round trip on files laid out as Canvas and Moodle write them (tests/lms_fixtures.py):
intake decisions, rosters, grades files and feedback zips, each parsed back with the rule the LMS's
own importer applies. Pure functions over real zip and CSV files; the real apps are in
tests/e2e/test_lms_round.py."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import zipfile
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, TOTAL_POINTS
from lms_fixtures import (
    ABSENT,
    CANVAS_COLUMN,
    CLASS,
    DUE_UTC,
    attachment_id,
    canvas_download,
    canvas_gradebook,
    moodle_download,
    moodle_participants,
    moodle_worksheet,
)
from lms_importers import canvas_import_rows

from pe_course.lms import canvas, moodle
from pe_course.lms.collect import plan
from pe_course.lms.grades import Final
from pe_course.lms.intake import archive_entries, canonical_notebook
from pe_course.lms.roster import read_people, read_table, write_table

NPMS = {s.npm for s in CLASS}


def _content(nb: str) -> bytes:
    return f'{{"nb": "{nb}"}}'.encode()


def _plan(archive, rosters=(), known=None, zone="Asia/Jakarta"):
    people = [p for r in rosters for p in read_people(r)[1]]
    notebook_of = lambda f: canonical_notebook(f, NOTEBOOKS)  # noqa: E731
    label = ", ".join(str(r) for r in rosters)
    return plan(archive_entries(archive), notebook_of, list(NOTEBOOKS), people, known or {}, zone, label)


def _taken(result) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for info in result.taken.values():
        out.setdefault(info["student_id"], set()).add(info["file_id"])
    return out


def _expected(key=lambda s: s.npm) -> dict[str, set[str]]:
    return {key(s): {f"{nb}.ipynb" for nb in s.files} for s in CLASS}


def _late(result) -> set[str]:
    due = dt.datetime.fromisoformat(DUE_UTC).replace(tzinfo=dt.timezone.utc)
    return {
        sid
        for sid, rec in result.identities.items()
        if rec.time and dt.datetime.fromisoformat(rec.time) > due
    }


@pytest.mark.parametrize("bom", [True, False])
def test_canvas_download_every_student_taken_with_the_lms_lateness(tmp_path, bom):
    archive = canvas_download(tmp_path / "canvas.zip", _content)
    result = _plan(archive, [canvas_gradebook(tmp_path / "gb.csv", bom=bom)])
    assert _taken(result) == _expected()
    skipped = "\n".join(f"{p}: {why}" for p, why in result.skipped.items())
    assert "studenttest_999_" in skipped and "Test Student" in skipped
    assert "catatan.txt: it is not one of the assignment's notebooks" in skipped
    assert {sid for sid, r in result.identities.items() if r.late} == {"2306002"}
    assert all(not r.time and "_LATE flag" in r.time_source for r in result.identities.values())
    siti = result.identities["2306003"]
    assert siti.attachments == {nb: str(attachment_id(CLASS[2], nb)) for nb in NOTEBOOKS}
    text = "\n".join(result.lines)
    assert f"{ABSENT.npm} (Wijaya, Hadi): on the roster, nothing submitted" in text
    assert "Student, Test" not in text


def test_canvas_without_roster_ids_are_the_name_keys_and_a_redownload_keeps_them(tmp_path):
    archive = canvas_download(tmp_path / "canvas.zip", _content)
    first = _plan(archive)
    assert {"yilmazcagla", "nurainisiti", "prasetyoeko", "anggrainidewiskom"} <= set(first.identities)
    assert len(_taken(first)) == 7
    again = _plan(archive, known=first.identities)
    assert _taken(again) == _taken(first)


@pytest.mark.parametrize(("version", "folders"), [(4, True), (4, False), (3, True), (3, False)])
def test_moodle_download_every_student_taken(tmp_path, version, folders):
    archive = moodle_download(tmp_path / "moodle.zip", _content, version, folders)
    result = _plan(archive, [moodle_participants(tmp_path / "participants.csv")])
    assert _taken(result) == _expected()
    assert all("not a notebook" in why for p, why in result.skipped.items() if "onlinetext" in p)
    assert len(result.skipped) == len(CLASS)  # the online-text entries only, each with its reason
    if version == 4:  # ZipStream's times are the download's: never used
        assert all(not r.time for r in result.identities.values())
        assert all("Moodle ≥ 4.0 stamps its zip" in r.time_source for r in result.identities.values())
    else:  # Moodle 3.x: real upload times in server time (WIB): only Çağla is late
        assert _late(result) == {"2306002"}
        assert all("read in Asia/Jakarta" in r.time_source for r in result.identities.values())


def test_moodle3_times_read_as_utc_would_make_students_late(tmp_path):
    """The measurement behind lms_timezone: the same download read in the wrong zone."""
    archive = moodle_download(tmp_path / "moodle.zip", _content, 3)
    assert len(_late(_plan(archive, zone="UTC"))) == 6  # all but Gita (09:05 WIB)
    assert len(_late(_plan(archive, zone="Asia/Jakarta"))) == 1


def test_moodle_worksheet_gives_times_and_lateness_and_wins_over_the_archive(tmp_path):
    archive = moodle_download(tmp_path / "moodle.zip", _content, 4)
    result = _plan(archive, [moodle_worksheet(tmp_path / "worksheet.csv")])
    assert _taken(result) == _expected()
    assert {sid for sid, r in result.identities.items() if r.late} == {"2306002"}
    assert _late(result) == {"2306002"}
    assert all("Moodle grading worksheet" in r.time_source for r in result.identities.values())
    assert "2306008 (Hadi Wijaya): on the roster, nothing submitted" in "\n".join(result.lines)


def test_moodle_without_roster_ids_from_names_and_redownload_maps_back(tmp_path):
    archive = moodle_download(tmp_path / "moodle.zip", _content, 4)
    first = _plan(archive)
    assert "siti-nuraini" in first.identities and "cagla-yilmaz" in first.identities
    again = _plan(moodle_download(tmp_path / "again.zip", _content, 3), known=first.identities)
    assert set(_taken(again)) == set(_taken(first))


@pytest.mark.parametrize(("delimiter", "bom"), [(",", False), (";", True)])
def test_rosters_as_the_lms_export_them(tmp_path, delimiter, bom):
    kind, people = read_people(canvas_gradebook(tmp_path / "gb.csv", delimiter, bom))
    assert kind == "canvas"
    by_id = {p.student_id: p for p in people}
    assert set(by_id) == NPMS | {ABSENT.npm, "999"}
    assert by_id["2306004"].name == "=Prasetyo, Eko" and by_id["2306002"].canvas_key == "yılmazçağla"
    assert by_id["999"].test_student
    kind, people = read_people(moodle_worksheet(tmp_path / "w.csv", bom, delimiter))
    assert kind == "moodle-worksheet"
    assert {p.participant: p.student_id for p in people}["105"] == "2306005"
    kind, people = read_people(moodle_participants(tmp_path / "p.csv"))
    assert kind == "moodle-participants"
    assert {p.name for p in people} >= {"Siti Nur'aini", "Dewi Anggraini, S.Kom"}


FINALS = {
    "2306001": Final("2306001", TOTAL_POINTS, TOTAL_POINTS),
    "2306002": Final("2306002", 17.5, TOTAL_POINTS, penalty=2.0),
    "2306003": Final("2306003", None, TOTAL_POINTS, why="1 written answer(s) not graded yet"),
    "2306004": Final("2306004", 20.0, TOTAL_POINTS),
    "2306005": Final("2306005", 30.25, TOTAL_POINTS),
    "2306006": Final("2306006", 10.0, TOTAL_POINTS),
    "2306007": Final("2306007", 0.0, TOTAL_POINTS),
    "ghost": Final("ghost", 5.0, TOTAL_POINTS),
}


@pytest.mark.parametrize(("delimiter", "bom"), [(",", False), (";", True)])
def test_canvas_grades_file_holds_only_this_assignment_and_final_scores(tmp_path, delimiter, bom):
    source = canvas_gradebook(tmp_path / "export.csv", delimiter, bom)
    archive = canvas_download(tmp_path / "canvas.zip", _content)
    identities = _plan(archive, [source]).identities
    filled = canvas.fill(read_table(source), FINALS, identities, "positional-encoding")
    out = write_table(filled.table, tmp_path / "import.csv")
    assert out.read_bytes().startswith(b"\xef\xbb\xbf") == bom
    header, points, students = canvas_import_rows(out)
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", CANVAS_COLUMN]
    before_header, points_before, before = canvas_import_rows(source)
    assert points == [[c for c, h in zip(points_before[0], before_header, strict=True) if h in header]]
    scores = {r[2]: r[-1] for r in students}
    assert scores == {  # no blank cell: Siti (not final), Hadi (not in the gradebook), Test Student left out
        "2306001": f"{TOTAL_POINTS:g}",
        "2306002": "17.5",
        "2306004": "20",
        "2306005": "30.25",
        "2306006": "10",
        "2306007": "0",
    }
    kept = {r[2]: r[:-1] for r in before}
    for row in students:  # the identity cells as Canvas wrote them
        assert row[:-1] == kept[row[2]][:5]
    assert '="=Prasetyo, Eko"' in [r[0] for r in students]  # Canvas's own quoting: text, never a formula
    assert "Yılmaz, Çağla".encode() in out.read_bytes()
    text = "\n".join(filled.notes)
    assert "Nur'aini, Siti (2306003): left out, Canvas keeps its grade (none): 1 written answer(s)" in text
    assert "Wijaya, Hadi (Canvas ID 1008): not in nbgrader's gradebook: left out" in text
    assert "Test Student (Student View): left out" in text
    assert filled.matched == set(FINALS) - {"ghost"}


def test_canvas_grades_need_the_column_and_the_points_row(tmp_path):
    source = canvas_gradebook(tmp_path / "export.csv")
    with pytest.raises(ValueError, match="no assignment column .* Positional Encoding \\(4321\\)"):
        canvas.fill(read_table(source), FINALS, {}, "tugas-lain")
    filled = canvas.fill(read_table(source), FINALS, {}, "tugas-lain", column="4321").table
    by_sis_id = {r[2]: r[5] for r in filled.rows[2:]}  # by SIS User ID, no identities
    assert by_sis_id["2306001"] == f"{TOTAL_POINTS:g}"
    table = read_table(source)
    table.rows = [r for r in table.rows if "Points Possible" not in r[0]]
    with pytest.raises(ValueError, match="Points Possible"):
        canvas.fill(table, FINALS, {}, "positional-encoding")


def test_moodle_worksheet_filled_as_its_upload_reads_it(tmp_path):
    source = moodle_worksheet(tmp_path / "worksheet.csv", bom=True)
    raw = source.read_text(encoding="utf-8-sig").replace("Eko Prasetyo", "=Eko Prasetyo")
    source.write_text(raw, encoding="utf-8-sig")
    identities = _plan(moodle_download(tmp_path / "m.zip", _content, 4), [source]).identities
    filled = moodle.fill(read_table(source), FINALS, identities, "positional-encoding")
    out = write_table(filled.table, tmp_path / "filled.csv")
    # assignfeedback_offline_grade_importer: columns by exact name, user from "Participant N"
    rows = list(csv.DictReader(io.StringIO(out.read_bytes().decode("utf-8-sig"), newline="")))
    got = {r["Identifier"][len("Participant ") :]: r for r in rows}
    assert {k: v["Grade"] for k, v in got.items()} == {
        "101": f"{TOTAL_POINTS:g}",
        "102": "17.5",
        "103": "",
        "104": "20",
        "105": "30.25",
        "106": "10",
        "107": "0",
        "108": "",
    }
    assert all(float(v["Grade"]) <= float(v["Maximum Grade"]) for v in got.values() if v["Grade"])
    assert got["102"]["Feedback comments"].startswith(
        f"Nilai tugas positional-encoding: 17.5 dari {TOTAL_POINTS:g} poin"
    )
    assert got["103"]["Feedback comments"] == ""
    assert got["104"]["Full name"] == "'=Eko Prasetyo"  # never a formula in a spreadsheet
    assert got["102"]["Full name"] == "Çağla Yılmaz" and got["101"]["Last modified (grade)"] == "-"
    text = "\n".join(filled.notes)
    assert (
        "Siti Nur'aini (Participant 103) = 2306003: grade left as downloaded (Moodle keeps its own)" in text
    )
    assert "Hadi Wijaya (Participant 108): not in nbgrader's gradebook: left as downloaded" in text


def _pages(tmp_path, students):
    for sid in students:
        folder = tmp_path / "feedback" / sid / "positional-encoding"
        folder.mkdir(parents=True)
        for nb in NOTEBOOKS:
            (folder / f"{nb}.html").write_text(f"<p>{sid} {nb}</p>", encoding="utf-8")
    return tmp_path / "feedback"


def test_canvas_feedback_zip_names_parse_back_to_user_and_attachment(tmp_path):
    identities = _plan(
        canvas_download(tmp_path / "c.zip", _content), [canvas_gradebook(tmp_path / "g.csv")]
    ).identities
    feedback = _pages(tmp_path, [s for s in identities if s != "2306006"])
    notes = canvas.feedback_zip(feedback, "positional-encoding", identities, tmp_path / "out.zip")
    assert notes == ["2306006: no feedback pages (run pe-course feedback): not in the zip"]
    by_user = {str(s.canvas_id): s for s in CLASS}
    names = zipfile.ZipFile(tmp_path / "out.zip").namelist()
    assert len(names) == 6 * len(NOTEBOOKS)
    for name in names:  # Assignment#infer_comment_context_from_filename
        user, attachment = [p for p in name.split("_") if re.fullmatch(r"\d+", p)][:2]
        student = by_user[user]
        assert int(attachment) in {attachment_id(student, nb) for nb in student.files}
        assert ("_LATE_" in name) == student.late


@pytest.mark.parametrize("version", [4, 3])
def test_moodle_feedback_zip_folders_parse_back_to_participants(tmp_path, version):
    archive = moodle_download(tmp_path / "m.zip", _content, version)
    identities = _plan(archive, [moodle_worksheet(tmp_path / "w.csv")]).identities
    feedback = _pages(tmp_path, list(identities))
    assert moodle.feedback_zip(feedback, "positional-encoding", identities, tmp_path / "out.zip") == []
    by_participant = {str(s.participant): s for s in CLASS}
    seen = set()
    for name in zipfile.ZipFile(tmp_path / "out.zip").namelist():  # is_valid_filename_for_import
        folder, page = name.split("/")
        info = folder.split("_", 4)
        assert len(info) >= 4 and info[1] in by_participant and info[2:4] == ["assignsubmission", "file"]
        assert folder.endswith("_") == (version == 3) and page.endswith(".html")
        seen.add(info[1])
    assert seen == set(by_participant)


def test_bad_inputs_are_one_clear_line(tmp_path):
    from traitlets import TraitError

    from pe_course.lms.grades import ExportError
    from pe_course.lms.intake import LmsFileNameCollector
    from pe_course.lms.roster import RosterError

    with pytest.raises(TraitError, match="'Mars/Base' is not a time zone name"):
        LmsFileNameCollector(lms_timezone="Mars/Base")
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("Full name,NPM\nÇağla,1\n".encode("cp1254"))
    with pytest.raises(RosterError, match="latin1.csv: not UTF-8 text"):
        read_table(latin1)
    with pytest.raises(ExportError, match="not a Moodle grading worksheet"):
        moodle.fill(read_table(canvas_gradebook(tmp_path / "gb.csv")), FINALS, {}, "positional-encoding")
    worksheet = read_table(moodle_worksheet(tmp_path / "scale.csv"))
    worksheet.rows[0][6] = "Scale"
    for row in worksheet.rows[1:]:  # a scale's items, as Moodle writes them in that column
        row[6] = "Kurang, Cukup, Baik"
    with pytest.raises(ExportError, match="no 'Maximum grade' column .graded with a scale"):
        moodle.fill(worksheet, FINALS, {}, "positional-encoding")
    with pytest.raises(ExportError, match="not a Canvas gradebook export"):
        canvas.fill(read_table(moodle_worksheet(tmp_path / "w.csv")), FINALS, {}, "positional-encoding")


def test_older_canvas_names_and_indonesian_moodle_dates(tmp_path):
    from pe_course.lms.collect import _worksheet_time
    from pe_course.lms.names import parse

    old = parse("dl/ani_late_11_21_01_embedding.ipynb")
    assert (old.name, old.lms_id, old.attachment, old.late, old.file) == (
        "ani",
        "11",
        "21",
        True,
        "01_embedding.ipynb",
    )
    zone = __import__("zoneinfo").ZoneInfo("Asia/Jakarta")
    assert _worksheet_time("Sabtu, 21 November 2026, 19:48", zone) == "2026-11-21T19:48:00+07:00"
    assert _worksheet_time("Saturday, 21 November 2026, 07:48 PM", zone) == "2026-11-21T19:48:00+07:00"
    assert _worksheet_time("-", zone) == "" and _worksheet_time("kemarin sore", zone) == ""


def test_export_on_a_real_gradebook_without_an_intake_names_what_it_cannot_send(tmp_path):
    """Students known to nbgrader's (SQLite) gradebook but never taken in from this LMS, one of them
    without a submission: left out of the import with the reason, and nobody silently missing from the zip."""
    from nbgrader.api import Gradebook

    from pe_course.course import Course
    from pe_course.lms.upload import export

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}", course_id="default_course") as gb:
        gb.add_assignment("positional-encoding")
        for sid in ("2306001", "2306008"):
            gb.add_student(sid)
    source = canvas_gradebook(tmp_path / "export.csv")
    files, notes = export(Course(tmp_path, "positional-encoding"), "canvas", source, tmp_path / "out")
    assert [f.name for f in files] == ["canvas-grades-import.csv", "canvas-feedback.zip", "cell-points.csv"]
    assert zipfile.ZipFile(files[1]).namelist() == []
    text = "\n".join(notes)
    for sid, name in (("2306001", "Lestari, Ani"), ("2306008", "Wijaya, Hadi")):
        assert (
            f"{name} ({sid}): left out, Canvas keeps its grade (none): no submission in the gradebook" in text
        )
        assert f"{sid}: no canvas identity from an intake" in text
    assert files[2].read_text(encoding="utf-8").splitlines() == [
        "student_id,notebook,cell,kind,score,max_score,needs_manual_grade"
    ]


def test_two_files_for_one_notebook_the_later_upload_is_taken_and_the_other_named(tmp_path):
    from pe_course.lms.intake import canvas_name, lms_zip

    canvas = lms_zip(
        tmp_path / "canvas.zip",
        {
            canvas_name("lestariani", 1001, 20, "01_embedding.ipynb"): b"{}",
            canvas_name("lestariani", 1001, 31, "01_embedding-1.ipynb"): b"{}",
        },
        streamed=True,
    )
    result = _plan(canvas)
    assert [Path(p).name for p in result.taken] == ["lestariani_1001_31_01_embedding-1.ipynb"]
    (why,) = result.skipped.values()
    assert why.endswith(
        "lestariani_1001_31_01_embedding-1.ipynb taken (the later upload: the higher Canvas attachment id)"
    )
    moodle = lms_zip(
        tmp_path / "moodle.zip",
        {
            "Ani Lestari_101_assignsubmission_file/01_embedding (1).ipynb": b"{}",
            "Ani Lestari_101_assignsubmission_file/01_embedding.ipynb": b"{}",
        },
        streamed=True,
    )
    result = _plan(moodle)
    assert [Path(p).name for p in result.taken] == ["01_embedding.ipynb"]
    assert list(result.skipped.values())[0].endswith("taken (its name is exactly the notebook's)")


def test_canvas_export_with_last_and_first_name_columns(tmp_path):
    """Canvas's "show first and last names" export: LastName, FirstName, ID, … (GradebookExporter)."""
    source = canvas_gradebook(tmp_path / "export.csv")
    table = read_table(source)
    header = ["LastName", "FirstName", *table.header[1:]]
    rows = [header]
    for row in table.rows[1:]:
        last, _, first = row[0].partition(", ")
        rows.append([last, first, *row[1:]] if row[1] else [row[0], "", *row[1:]])
    write_table(type(table)(rows, ",", False, "\r\n"), source)
    kind, people = read_people(source)
    assert kind == "canvas" and {p.name for p in people} >= {"Yılmaz, Çağla", "Nur'aini, Siti"}
    identities = _plan(canvas_download(tmp_path / "c.zip", _content), [source]).identities
    assert set(identities) == NPMS
    filled = canvas.fill(read_table(source), FINALS, identities, "positional-encoding").table
    assert filled.header == [
        "LastName",
        "FirstName",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        CANVAS_COLUMN,
    ]
    assert {r[3]: r[-1] for r in filled.rows[2:]}["2306002"] == "17.5"
    assert filled.rows[1][0] == "    Points Possible" and filled.rows[1][-1] == f"{TOTAL_POINTS:.2f}"

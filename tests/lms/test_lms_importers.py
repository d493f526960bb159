"""The files ``pe-course export`` writes, run through models of Canvas's and Moodle's own importers
(tests/lms_importers.py, each rule with the importer file it comes from), on a class written as the LMSs
write it (tests/lms_fixtures.py): what each student would get after the upload. A change that breaks an
upload fails here first; each model is also shown to catch the mistake it guards against."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, TOTAL_POINTS
from lms_fixtures import (
    ABSENT,
    CLASS,
    TEST_STUDENT,
    attachment_id,
    canvas_download,
    canvas_gradebook,
    moodle_download,
    moodle_participants,
    moodle_worksheet,
)
from lms_importers import (
    CanvasCourse,
    MoodleAssignment,
    canvas_import,
    canvas_reupload,
    moodle_worksheet_import,
    moodle_zip_import,
)
from test_lms import FINALS, _content, _pages, _plan

from pe_course.lms import canvas, moodle
from pe_course.lms.grades import ExportError
from pe_course.lms.roster import read_table, write_table
from pe_course.lms.upload import upload_lines

PE, QUIZ = "4321", "4322"
SITI, EKO = CLASS[2], CLASS[3]  # Siti's written answer is not graded yet (FINALS); Eko is locked in Moodle


def _canvas_course() -> CanvasCourse:
    people = [*CLASS, ABSENT, TEST_STUDENT]
    return CanvasCourse(
        assignments={PE: "Positional Encoding", QUIZ: "Kuis 1"},
        students={
            str(s.canvas_id): {
                "name": s.full,
                "sortable": s.sortable_name,
                "sis": s.npm,
                "login": f"{s.first.lower()}@kampus.ac.id",
            }
            for s in people
        },
        # Canvas already holds Siti's 30 (graded by hand) and Hadi's 0; a TA changed Ani's quiz after the export
        grades={("1003", PE): "30", ("1008", PE): "0", ("1001", QUIZ): "10"},
        attachments={
            str(s.canvas_id): {str(attachment_id(s, nb)): name for nb, name in s.files.items()} for s in CLASS
        },
    )


@pytest.mark.parametrize(("delimiter", "bom"), [(",", False), (";", True)])
def test_canvas_import_sets_every_final_score_and_clears_nothing(tmp_path, delimiter, bom):
    source = canvas_gradebook(tmp_path / "export.csv", delimiter, bom)
    identities = _plan(canvas_download(tmp_path / "c.zip", _content), [source]).identities
    filled = canvas.fill(read_table(source), FINALS, identities, "positional-encoding")
    result = canvas_import(write_table(filled.table, tmp_path / "import.csv"), _canvas_course())
    assert not result.failed and not result.new_assignments and not result.unknown_students
    expected = {
        (str(s.canvas_id), PE): f"{FINALS[s.npm].scaled(TOTAL_POINTS):g}" for s in CLASS if s is not SITI
    }
    assert {k: float(v) for k, v in result.changes.items()} == {k: float(v) for k, v in expected.items()}
    assert ("1003", PE) not in result.changes and ("1008", PE) not in result.changes  # 30 and 0 kept
    assert ("1001", QUIZ) not in result.changes  # the TA's later quiz grade is not undone
    text = "\n".join(filled.notes)
    assert "Nur'aini, Siti (2306003): left out, Canvas keeps its grade" in text
    assert "Wijaya, Hadi (Canvas ID 1008): not in nbgrader's gradebook: left out" in text


def test_the_canvas_model_catches_a_blank_cell_and_a_stale_column(tmp_path):
    """What the export wrote before issue 31: the whole export with the blank cell of a student whose
    score is not final. The model sees Siti's 30 cleared and Ani's quiz undone."""
    source = read_table(canvas_gradebook(tmp_path / "export.csv"))
    result = canvas_import(write_table(source, tmp_path / "blank.csv"), _canvas_course())
    assert result.changes[("1003", PE)] == "" and ("1001", QUIZ) in result.changes


def test_another_courses_canvas_export_would_create_an_assignment_and_unknown_students(tmp_path):
    other = _canvas_course()
    other.assignments = {"9999": "Positional Encoding"}
    other.students = {}
    result = canvas_import(canvas_gradebook(tmp_path / "export.csv"), other)
    assert "Positional Encoding (4321)" in result.new_assignments and len(result.unknown_students) == 9


def test_canvas_reupload_one_comment_per_student_each_page_under_the_students_own_file(tmp_path):
    identities = _plan(
        canvas_download(tmp_path / "c.zip", _content), [canvas_gradebook(tmp_path / "g.csv")]
    ).identities
    feedback = _pages(tmp_path, list(identities))
    canvas.feedback_zip(feedback, "positional-encoding", identities, tmp_path / "out.zip")
    course = _canvas_course()
    comments, ignored = canvas_reupload(tmp_path / "out.zip", course)
    assert ignored == []
    for s in CLASS:
        comment = comments[str(s.canvas_id)]
        assert comment.text == "See attached files"
        shown = sorted(name for name, _ in comment.files)
        # a page per notebook; one without a submitted file is shown under the first notebook's file
        assert set(shown) == set(s.files.values()) and len(shown) == len(NOTEBOOKS)
        assert {ext for _, ext in comment.files} == {".html"}
    assert ("01_Embedding (1).ipynb", ".html") in comments["1003"].files  # Siti's own file name
    course.attachments["1001"] = {"99": "01_embedding.ipynb"}  # Ani resubmitted after the download
    comments, ignored = canvas_reupload(tmp_path / "out.zip", course)
    assert "1001" not in comments and len(ignored) == len(NOTEBOOKS)
    assert "resubmitted after your download is skipped" in " ".join(
        upload_lines("canvas", [Path("a"), Path("b")])
    )


def _moodle_assign(lang: str = "en") -> MoodleAssignment:
    return MoodleAssignment(
        participants={str(s.participant): s.npm for s in [*CLASS, ABSENT]},
        maxgrade=TOTAL_POINTS,
        lang=lang,
    )


GRADED_AT = dt.datetime(2026, 11, 25, 10, 0)  # Siti's and Eko's grades, given in Moodle before the download


def _worksheet_as_moodle_holds_it(path: Path, assign: MoodleAssignment) -> Path:
    """The fixture worksheet with Siti graded 30 (with a comment) and Eko locked at 25 in Moodle."""
    table = read_table(moodle_worksheet(path))
    when = GRADED_AT.strftime("%A, %d %B %Y, %I:%M %p")
    for row in table.rows[1:]:
        if row[0] == f"Participant {SITI.participant}":
            row[5], row[9], row[10] = "30.00", when, "Bagus"
        if row[0] == f"Participant {EKO.participant}":
            row[5], row[7], row[9] = "25.00", "No", when
    for s, grade, comment in ((SITI.npm, 30.0, "Bagus"), (EKO.npm, 25.0, "")):
        assign.grades[s], assign.graded_at[s] = grade, int(GRADED_AT.timestamp())
        assign.comments[s] = comment
    assign.locked.add(EKO.npm)
    return write_table(table, path)


def test_moodle_worksheet_upload_keeps_pending_and_locked_students_as_moodle_holds_them(tmp_path):
    assign = _moodle_assign()
    source = _worksheet_as_moodle_holds_it(tmp_path / "worksheet.csv", assign)
    identities = _plan(moodle_download(tmp_path / "m.zip", _content), [source]).identities
    filled = moodle.fill(read_table(source), FINALS, identities, "positional-encoding")
    now = int(dt.datetime(2026, 12, 4, 9, 0).timestamp())
    grades, comments, failed = moodle_worksheet_import(
        write_table(filled.table, tmp_path / "w.csv"), assign, now
    )
    assert not failed
    sent = {s.npm: FINALS[s.npm].scaled(TOTAL_POINTS) for s in CLASS if s not in (SITI, EKO)}
    assert grades == sent
    assert assign.grades[SITI.npm] == 30 and assign.comments[SITI.npm] == "Bagus"
    assert assign.grades[EKO.npm] == 25 and EKO.npm not in comments  # locked: no comment either
    assert set(comments) == set(sent)
    text = "\n".join(filled.notes)
    assert f"Eko Prasetyo (Participant {EKO.participant}) = 2306004: 'Grade can be changed' is 'No'" in text
    assert "Siti Nur'aini (Participant 103) = 2306003: grade left as downloaded" in text
    assert filled.late == {"2306002"}  # the worksheet's Status: "… late"


def test_the_moodle_model_catches_a_comment_written_on_a_locked_grade(tmp_path):
    assign = _moodle_assign()
    table = read_table(_worksheet_as_moodle_holds_it(tmp_path / "worksheet.csv", assign))
    for row in table.rows[1:]:  # what the export wrote before: Eko's row filled like any other
        if row[0] == f"Participant {EKO.participant}":
            row[5], row[10] = "20", "Nilai tugas positional-encoding: 20 dari 35 poin."
    grades, comments, _ = moodle_worksheet_import(
        write_table(table, tmp_path / "w.csv"), assign, 2_000_000_000
    )
    assert EKO.npm not in grades and EKO.npm in comments  # Moodle skips the grade, imports the comment


def test_moodle_upload_order_worksheet_first(tmp_path):
    """The zip's import touches every grade record (importziplib.php), so a worksheet uploaded after it
    looks older than Moodle's records: every grade is skipped. The export says which comes first."""
    identities = _plan(moodle_download(tmp_path / "m.zip", _content), [moodle_worksheet(tmp_path / "ws.csv")])
    filled = moodle.fill(
        read_table(tmp_path / "ws.csv"), FINALS, identities.identities, "positional-encoding"
    )
    sheet = write_table(filled.table, tmp_path / "w.csv")
    moodle.feedback_zip(_pages(tmp_path, list(identities.identities)), "positional-encoding", identities.identities,
                        tmp_path / "fb.zip")  # fmt: skip
    now = int(dt.datetime(2026, 12, 4, 9, 0).timestamp())
    right = _moodle_assign()
    grades, _, _ = moodle_worksheet_import(sheet, right, now)
    added = moodle_zip_import(tmp_path / "fb.zip", right, now + 60)
    assert len(grades) == 6 and set(added) == {s.npm for s in CLASS}
    assert all(sorted(files) == sorted(f"{nb}.html" for nb in NOTEBOOKS) for files in added.values())
    wrong = _moodle_assign()
    moodle_zip_import(tmp_path / "fb.zip", wrong, now)
    assert moodle_worksheet_import(sheet, wrong, now + 120)[0] == {}  # every grade skipped
    first, why = upload_lines("moodle", [Path("w.csv"), Path("fb.zip")])
    assert (
        first.index("1. Submissions → Upload grading worksheet")
        < first.index("2. then")
        < first.index("fb.zip")
    )
    assert "skips every grade" in why


INDONESIAN = {
    "Identifier": "ID",
    "Full name": "Nama lengkap",
    "ID number": "Nomor ID",
    "Email address": "Alamat email",
    "Grade": "Nilai",
    "Maximum Grade": "Nilai maksimum",
    "Grade can be changed": "Nilai dapat diubah",
    "Last modified (submission)": "Terakhir diubah (ajuan)",
    "Last modified (grade)": "Terakhir diubah (nilai)",
    "Feedback comments": "Komentar umpan balik",
}


def test_an_indonesian_worksheet_is_recognised_and_uploads(tmp_path):
    table = read_table(moodle_worksheet(tmp_path / "worksheet.csv"))
    table.rows[0] = [INDONESIAN.get(h, h) for h in table.rows[0]]
    for row in table.rows[1:]:
        row[0] = row[0].replace("Participant", "Peserta")
        row[6], row[7] = row[6].replace(".", ","), {"Yes": "Ya", "No": "Tidak"}[row[7]]
    table.rows[2][9] = "Sabtu, 28 November 2026, 10:00"  # Çağla graded in Moodle already
    source = write_table(table, tmp_path / "lembar.csv")
    identities = _plan(moodle_download(tmp_path / "m.zip", _content), [moodle_worksheet(tmp_path / "en.csv")])
    filled = moodle.fill(read_table(source), FINALS, identities.identities, "positional-encoding")
    assign = _moodle_assign("id")
    assign.graded_at["2306002"] = int(dt.datetime(2026, 11, 28, 10, 0).timestamp())
    grades, comments, failed = moodle_worksheet_import(
        write_table(filled.table, tmp_path / "w.csv"), assign, 0
    )
    assert not failed and filled.table.rows[0] == table.rows[0]  # headers written back as downloaded
    sent = {s.npm for s in CLASS if FINALS[s.npm].score is not None}
    assert set(grades) == sent - {"2306002"} and set(comments) == sent - {"2306002"}
    # Moodle cannot read an Indonesian date (strtotime): Çağla's row is skipped, and the export says so
    assert "holds dates Moodle's upload cannot read" in "\n".join(filled.notes)


def test_the_moodle_model_refuses_headers_of_another_language(tmp_path):
    source = moodle_worksheet(tmp_path / "worksheet.csv")
    assert moodle_worksheet_import(source, _moodle_assign("id"), 0)[2] == "invalidgradeimport"


def test_refused_by_structure_in_one_line():
    from pe_course.lms.roster import Table
    from pe_course.lms.worksheet import kind

    participants = Table(
        [["First name", "Last name", "ID number"], ["Ani", "Lestari", "1"]], ",", False, "\n"
    )
    roster = Table([["NPM", "Nama"], ["2306001", "Ani"]], ",", False, "\n")
    assert kind(participants) == "moodle-participants" and kind(roster) == "roster"
    with pytest.raises(ExportError, match="not a Moodle grading worksheet"):
        moodle.fill(roster, FINALS, {}, "positional-encoding")


def test_participants_list_is_no_worksheet(tmp_path):
    from pe_course.lms.worksheet import kind

    assert kind(read_table(moodle_participants(tmp_path / "p.csv"))) == "moodle-participants"
    assert kind(read_table(moodle_worksheet(tmp_path / "w.csv"))) == "moodle-worksheet"
    assert kind(read_table(canvas_gradebook(tmp_path / "g.csv"))) == "canvas"
    assert zipfile.is_zipfile(moodle_download(tmp_path / "m.zip", _content))

"""LMS intake through the real ``nbgrader zip_collect``: what cannot be taken in is named."""

from __future__ import annotations

import nbformat
import pytest
from conftest import NOTEBOOKS, reference_nb

from pe_course.lms.intake import canvas_name, lms_zip, skipped_entries


def test_skipped_entries_are_listed_with_the_reason(tmp_path):
    archive = lms_zip(
        tmp_path / "download.zip",
        {
            canvas_name("ani", 11, 21, "01_embedding.ipynb"): b"{}",
            "../escape.ipynb": b"{}",
            "/etc/absolute.ipynb": b"{}",
            "sub/../../up.ipynb": b"{}",
            canvas_name("ani", 11, 21, "laporan.pdf"): b"%PDF",
        },
    )
    reasons = dict(skipped_entries(archive))
    assert set(reasons) == {
        "../escape.ipynb",
        "/etc/absolute.ipynb",
        "sub/../../up.ipynb",
        canvas_name("ani", 11, 21, "laporan.pdf"),
    }
    assert "absolute" in reasons["/etc/absolute.ipynb"] and "'..'" in reasons["../escape.ipynb"]
    assert "not a notebook" in reasons[canvas_name("ani", 11, 21, "laporan.pdf")]


@pytest.mark.slow
def test_zip_collect_names_every_entry_it_does_not_take_in(course_copy):
    archive_dir = course_copy.root / "downloaded" / "positional-encoding" / "archive"
    lms_zip(
        archive_dir / "download.zip",
        {
            canvas_name("ani", 11, 21, "01_embedding.ipynb"): nbformat.writes(
                reference_nb("01_embedding")
            ).encode(),
            "../escape.ipynb": b"{}",
            "/etc/absolute.ipynb": b"{}",
            canvas_name("budi", 12, 22, "catatan.txt"): b"hai",
        },
    )
    proc = course_copy.nbgrader("zip_collect", "positional-encoding", check=True)
    log = proc.stdout + proc.stderr
    for entry in ("../escape.ipynb", "/etc/absolute.ipynb", canvas_name("budi", 12, 22, "catatan.txt")):
        assert entry in log, f"{entry} skipped without a word:\n{log}"
    assert (course_copy.root / "submitted" / "ani" / "positional-encoding" / "01_embedding.ipynb").is_file()


def test_misplaced_and_renamed_notebooks_are_moved_when_unambiguous_and_always_named(tmp_path):
    from pe_course.lms.intake import tidy_submissions

    submitted = tmp_path / "submitted"
    (submitted / "ani" / "positional-encoding").mkdir(parents=True)
    (submitted / "ani" / "positional-encoding" / "01_embedding (1).ipynb").write_text("{}")
    (submitted / "budi").mkdir()
    (submitted / "budi" / "02_sinusoidal.ipynb").write_text("{}")
    (submitted / "citra" / "positional-encoding").mkdir(parents=True)
    for name in ("03_rotation.ipynb", "03_rotation-1.ipynb", "tugas.ipynb"):
        (submitted / "citra" / "positional-encoding" / name).write_text("{}")
    messages = tidy_submissions(submitted, "positional-encoding", NOTEBOOKS)
    assert (submitted / "ani" / "positional-encoding" / "01_embedding.ipynb").is_file()
    assert (submitted / "budi" / "positional-encoding" / "02_sinusoidal.ipynb").is_file()
    assert (submitted / "citra" / "positional-encoding" / "03_rotation-1.ipynb").is_file(), (
        "never overwritten"
    )
    text = "\n".join(messages)
    assert (
        "ani/positional-encoding/01_embedding (1).ipynb: graded as ani/positional-encoding/01_embedding.ipynb"
        in text
    )
    assert "budi/02_sinusoidal.ipynb: graded as" in text
    assert (
        "03_rotation-1.ipynb: looks like 03_rotation.ipynb, but a notebook of that name is already there"
        in text
    )
    assert "tugas.ipynb: not one of the notebooks" in text
    assert len(messages) == 4


@pytest.mark.slow  # runs `pytest graders` in a subprocess (the last case grades a notebook)
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["/nonexistent/01_embedding.ipynb"], 4),
        (["{tmp}/tugas.ipynb"], 4),
        (["{tmp}/01_embedding (1).ipynb"], 0),
    ],
)
def test_pytest_graders_refuses_a_path_it_cannot_grade(tmp_path, args, code):
    import subprocess
    import sys

    from conftest import REPO

    nb = nbformat.writes(reference_nb("01_embedding"))
    for name in ("tugas.ipynb", "01_embedding (1).ipynb"):
        (tmp_path / name).write_text(nb)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "graders")]
    argv += [f"--submission={a.format(tmp=tmp_path)}" for a in args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.slow
def test_moodle_download_with_a_roster_through_zip_collect(course_copy):
    import zipfile

    nb = nbformat.writes(reference_nb("01_embedding")).encode()
    archive = course_copy.root / "downloaded" / "positional-encoding" / "archive" / "moodle.zip"
    archive.parent.mkdir(parents=True)
    entries = {  # Moodle 3.x folders (the default) and flat files, as "Download all submissions" wrote them
        "Ani Lestari_101_assignsubmission_file_/01_embedding.ipynb": ((2026, 11, 20, 9, 15, 0), nb),
        "Budi Santoso_102_assignsubmission_file_/01_Embedding (1).ipynb": ((2026, 11, 21, 23, 59, 58), nb),
        "Citra Dewi_103_assignsubmission_file_01_embedding.ipynb": ((2026, 11, 22, 8, 0, 0), nb),
        "Dwi Hartono_104_assignsubmission_file_/laporan.pdf": ((2026, 11, 22, 8, 0, 0), b"%PDF"),
        "Eko Prasetyo_105_assignsubmission_file_/01_embedding.ipynb": ((2026, 11, 23, 10, 0, 0), nb),
    }
    with zipfile.ZipFile(archive, "w") as zf:
        for name, (when, data) in entries.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=when), data)
    (course_copy.root / "roster.csv").write_text(
        "Identifier,Full name,ID number\nParticipant 101,Ani Lestari,2306001\nParticipant 102,Budi Santoso,2306002\n"
        ",Citra Dewi,2306003\nParticipant 104,Dwi Hartono,2306004\n",
        encoding="utf-8",
    )
    config = course_copy.root / "nbgrader_config.py"
    config.write_text(config.read_text() + '\nc.LmsFileNameCollector.roster = "roster.csv"\n')
    proc = course_copy.nbgrader("zip_collect", "positional-encoding", check=True)
    log = proc.stdout + proc.stderr
    submitted = course_copy.root / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["2306001", "2306002", "2306003", "eko-prasetyo"]
    for sid in ("2306001", "2306002", "2306003", "eko-prasetyo"):
        assert (submitted / sid / "positional-encoding" / "01_embedding.ipynb").is_file()
    # Moodle 3.x keeps each file's upload time, in server time (here WIB, nbgrader_config.py): in UTC
    assert (
        (submitted / "2306002" / "positional-encoding" / "timestamp.txt")
        .read_text()
        .startswith("2026-11-21 16:59:58")
    )
    assert "Eko Prasetyo (participant 105) is not on the roster roster.csv: taken in as eko-prasetyo" in log
    assert "laporan.pdf" in log
    # nbgrader's late-submission policy sees the LMS's times: budi's file came after the due date
    with course_copy.course.gradebook() as gb:
        gb.update_or_create_assignment("positional-encoding", duedate="2026-11-21 12:00:00")
    from pe_course.report import collect
    from pe_course.round.grade import grade_round
    from pe_course.runners.local import LocalRunner

    grade_round(course_copy.course, LocalRunner(2), students=["2306001", "2306002"])
    late = {
        (i.student, i.detail.split(" (")[0]) for i in collect(course_copy.course).issues if i.kind == "late"
    }
    assert late == {("2306002", "submitted 5.0 h after the due date")}


def _nb(notebook: str) -> bytes:
    return nbformat.writes(reference_nb(notebook)).encode()


@pytest.mark.slow
@pytest.mark.parametrize("lms", ["canvas", "moodle4", "moodle3-flat"])
def test_zip_collect_takes_in_every_student_of_a_current_download(course_copy, lms):
    """The real ``nbgrader zip_collect`` on downloads laid out as each LMS writes them: every student
    of the class with the right notebooks and the LMS's time, the rest named with its reason."""
    from lms_fixtures import CLASS, canvas_download, canvas_gradebook, moodle_download, moodle_worksheet

    from pe_course.lms.identities import load

    archive_dir = course_copy.root / "downloaded" / "positional-encoding" / "archive"
    archive_dir.mkdir(parents=True)
    if lms == "canvas":
        canvas_download(archive_dir / "canvas.zip", _nb)
        roster = canvas_gradebook(course_copy.root / "gradebook.csv", ";", bom=True)
    else:
        version, folders = (4, True) if lms == "moodle4" else (3, False)
        moodle_download(archive_dir / "moodle.zip", _nb, version, folders)
        roster = moodle_worksheet(course_copy.root / "worksheet.csv")
    config = course_copy.root / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.LmsFileNameCollector.rosters = [{roster.name!r}]\n")
    proc = course_copy.nbgrader("zip_collect", "positional-encoding", check=True)
    log = proc.stdout + proc.stderr
    submitted = course_copy.root / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == sorted(s.npm for s in CLASS)
    for student in CLASS:
        folder = submitted / student.npm / "positional-encoding"
        assert sorted(p.stem for p in folder.glob("*.ipynb")) == sorted(student.files), student
        stamp = folder / "timestamp.txt"
        if lms == "canvas":  # Canvas states no time: none passed off as one
            assert not stamp.exists()
        else:  # the worksheet's WIB time, in UTC
            hour = (student.local_time[3] - 7) % 24
            assert stamp.read_text().startswith(f"2026-11-21 {hour:02d}:{student.local_time[4]:02d}"), student
    ids = load(course_copy.root, "positional-encoding")
    assert {sid for sid, rec in ids.items() if rec.late} == {"2306002"}
    with course_copy.course.gradebook() as gb:  # the LMS id in nbgrader's own Student record too
        lms_ids = {s.id: s.lms_user_id for s in gb.students}
    expected = {s.npm: str(s.canvas_id if lms == "canvas" else s.participant) for s in CLASS}
    assert lms_ids == expected
    assert "2306008 (" in log and "nothing submitted in this download" in log
    if lms == "canvas":
        assert "Test Student (Student View), not a student: left out" in log
        assert "catatan.txt: it is not one of the assignment's notebooks" in log
    else:
        assert "onlinetext.html: a Moodle submission of another kind" in log


@pytest.mark.slow
def test_zip_collect_with_a_roster_it_cannot_read_takes_nothing_in_and_says_why(course_copy):
    lms_zip(
        course_copy.root / "downloaded" / "positional-encoding" / "archive" / "canvas.zip",
        {canvas_name("lestariani", 1001, 10010, "01_embedding.ipynb"): _nb("01_embedding")},
    )
    config = course_copy.root / "nbgrader_config.py"
    config.write_text(config.read_text() + '\nc.LmsFileNameCollector.rosters = ["hilang.csv"]\n')
    proc = course_copy.nbgrader("zip_collect", "positional-encoding")
    assert proc.returncode != 0
    assert "Roster hilang.csv cannot be read:" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (course_copy.root / "submitted").exists()


def test_a_notebook_of_another_assignment_is_never_taken_for_one_of_the_same_number(tmp_path):
    """A course with two assignments: a file named as the other assignment's notebook (an LMS download
    holding both, a student's folder) is that notebook, not this assignment's notebook of its number."""
    from pe_course.lms.intake import canonical_notebook, tidy_submissions

    others = ("01_attention",)
    assert canonical_notebook("01_attention.ipynb", NOTEBOOKS) == "01_embedding", "alone: by its number"
    for name in ("01_attention.ipynb", "01_Attention (1).ipynb", "01_attention-2.ipynb"):
        assert canonical_notebook(name, NOTEBOOKS, others) is None, name
    assert canonical_notebook("01_embedding (1).ipynb", NOTEBOOKS, others) == "01_embedding"
    assert canonical_notebook("01_embeding.ipynb", NOTEBOOKS, others) == "01_embedding", "a typo still is"
    (tmp_path / "ani").mkdir()
    (tmp_path / "ani" / "01_attention.ipynb").write_text("{}")
    messages = tidy_submissions(tmp_path, "positional-encoding", NOTEBOOKS, others)
    assert messages == [
        f"ani/01_attention.ipynb: not one of the notebooks {', '.join(NOTEBOOKS)}; left alone (not graded)"
    ]
    assert not (tmp_path / "ani" / "positional-encoding").exists()

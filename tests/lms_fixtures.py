"""A class as Canvas and Moodle hand it over: bulk downloads and gradebook files written the way
their code writes them (Canvas ``lib/content_zipper.rb``, ``lib/gradebook_exporter.rb``; Moodle
``mod/assign/classes/downloader.php``, ``gradingtable.php`` download, participants table download).

Seven students submit, one of them late (Çağla, 2 h 48 min after the due date of 2026-11-21
17:00 WIB = 10:00 UTC); Hadi is enrolled and submits nothing; Fajar submits two of the four notebooks;
Siti renames a file and re-uploads one (Canvas's ``-1``); one sortable name starts with ``=``; Dewi's
name has a comma; Canvas's Test Student is in the Canvas files.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from conftest import TOTAL_POINTS

from pe_course.lms.intake import canvas_name, lms_zip
from pe_course.lms.names import canvas_key, moodle_name

DUE_UTC = "2026-11-21 10:00:00"  # 17:00 WIB


@dataclass(frozen=True)
class Student:
    first: str
    last: str
    npm: str
    canvas_id: int
    participant: int
    files: dict[str, str] = field(default_factory=dict)  # notebook -> file name as uploaded
    local_time: tuple = (2026, 11, 21, 15, 30, 0)  # upload time, WIB
    late: bool = False
    sortable: str = ""

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def sortable_name(self) -> str:
        return self.sortable or f"{self.last}, {self.first}"


ALL = {nb: f"{nb}.ipynb" for nb in ("01_embedding", "02_sinusoidal", "03_rotation", "04_similarity")}
CLASS = [
    Student("Ani", "Lestari", "2306001", 1001, 101, dict(ALL)),
    Student("Çağla", "Yılmaz", "2306002", 1002, 102, dict(ALL), (2026, 11, 21, 19, 48, 0), late=True),
    Student(
        "Siti",
        "Nur'aini",
        "2306003",
        1003,
        103,
        {**ALL, "01_embedding": "01_Embedding (1).ipynb", "02_sinusoidal": "02_sinusoidal-1.ipynb"},
    ),
    Student("Eko", "Prasetyo", "2306004", 1004, 104, dict(ALL), sortable="=Prasetyo, Eko"),
    Student("Dewi", "Anggraini, S.Kom", "2306005", 1005, 105, dict(ALL), sortable="Anggraini, Dewi, S.Kom"),
    Student("Fajar", "Nugroho", "2306006", 1006, 106, {k: ALL[k] for k in ("01_embedding", "03_rotation")}),
    Student("Gita", "Permata", "2306007", 1007, 107, dict(ALL), (2026, 11, 21, 9, 5, 0)),
]
ABSENT = Student("Hadi", "Wijaya", "2306008", 1008, 108, {})
TEST_STUDENT = Student("Test", "Student", "", 999, 0, {"01_embedding": "01_embedding.ipynb"})


def attachment_id(student: Student, notebook: str) -> int:
    return student.canvas_id * 10 + list(ALL).index(notebook)


def canvas_download(path: Path, content) -> Path:
    """A current Canvas "Download Submissions" zip (rubyzip: every entry stamped with the build time)."""
    files = {}
    for s in [*CLASS, TEST_STUDENT]:
        key = canvas_key(s.sortable_name)
        for nb, name in s.files.items():
            files[canvas_name(key, s.canvas_id, attachment_id(s, nb), name, late=s.late)] = content(nb)
    files[canvas_name(canvas_key(CLASS[0].sortable_name), 1001, 10019, "catatan.txt")] = b"hai"
    return lms_zip(path, files, streamed=True, when=(2026, 12, 2, 8, 0, 0))


def moodle_download(path: Path, content, version: int = 4, folders: bool = True) -> Path:
    """Moodle's "Download all submissions": 4.x (ZipStream, build time, folders without the trailing
    ``_``) or 3.x (each file's upload time in server time, ``…_file_/``), as folders or flat files."""
    files, when = {}, {}
    for s in CLASS:
        prefix = f"{moodle_name(s.full)}_{s.participant}_assignsubmission_file"
        for nb, name in s.files.items():
            arc = f"{prefix}{'_' if version == 3 else ''}/{name}" if folders else f"{prefix}_{name}"
            files[arc] = content(nb)
            when[arc] = s.local_time
        files[f"{moodle_name(s.full)}_{s.participant}_assignsubmission_onlinetext/onlinetext.html"] = (
            b"<p>-</p>"
        )
    if version == 4:
        return lms_zip(path, files, streamed=True, when=(2026, 12, 2, 8, 0, 0))
    return lms_zip(path, files, when=when)


def _csv(rows: list[list[str]], delimiter: str = ",", bom: bool = False) -> bytes:
    out = io.StringIO(newline="")
    csv.writer(out, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return (b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode("utf-8")


CANVAS_COLUMN = "Positional Encoding (4321)"


def canvas_gradebook(path: Path, delimiter: str = ",", bom: bool = False) -> Path:
    """Canvas's gradebook export with SIS ids: identity columns, this assignment, another one, totals."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", CANVAS_COLUMN, "Kuis 1 (4322)"]
    header += ["Current Points", "Final Points", "Current Score", "Unposted Current Score", "Final Score"]
    dec = "," if delimiter == ";" else "."
    rows = [
        header,
        ["    Points Possible", "", "", "", "", f"{TOTAL_POINTS:.2f}".replace(".", dec), f"10{dec}00"]
        + ["(read only)"] * 5,
    ]
    students = sorted([*CLASS, ABSENT], key=lambda s: s.sortable_name) + [TEST_STUDENT]
    for i, s in enumerate(students):
        name = s.sortable_name
        name = f'="{name}"' if name.startswith("=") else name  # GradebookExporter#student_name
        quiz = "" if s is TEST_STUDENT else f"{7 + i % 3}{dec}00"
        login = "" if s is TEST_STUDENT else f"{s.first.lower()}@kampus.ac.id"
        rows.append([name, str(s.canvas_id), s.npm, login, "TI-A", "", quiz] + ["8"] * 5)
    path.write_bytes(_csv(rows, delimiter, bom))
    return path


WORKSHEET_HEADER = [
    "Identifier",
    "Full name",
    "ID number",
    "Email address",
    "Status",
    "Grade",
    "Maximum Grade",
    "Grade can be changed",
    "Last modified (submission)",
    "Last modified (grade)",
    "Feedback comments",
]


def _moodle_time(t: tuple) -> str:
    import datetime as dt

    return dt.datetime(*t).strftime("%A, %d %B %Y, %I:%M %p")  # Moodle's strftimedatetime


def moodle_worksheet(path: Path, bom: bool = True, delimiter: str = ",") -> Path:
    rows = [WORKSHEET_HEADER]
    for s in [*CLASS, ABSENT]:
        if not s.files:
            status, when = "No submission", "-"
        else:
            status = "Submitted for grading" + (" - 2 hours 48 mins late" if s.late else "")
            when = _moodle_time(s.local_time)
        rows.append(
            [
                f"Participant {s.participant}",
                s.full,
                s.npm,
                f"{s.first.lower()}@kampus.ac.id",
                status,
                "",
                f"{TOTAL_POINTS:.2f}",
                "Yes",
                when,
                "-",
                "",
            ]
        )
    path.write_bytes(_csv(rows, delimiter, bom))
    return path


def moodle_participants(path: Path) -> Path:
    """Moodle 4.x participants page, "Download table data as" CSV (no participant id, no full name)."""
    rows = [["First name", "Last name", "ID number", "Email address", "Roles", "Groups", "Status"]]
    for s in [*CLASS, ABSENT]:
        rows.append([s.first, s.last, s.npm, f"{s.first.lower()}@kampus.ac.id", "Student", "TI-A", "Active"])
    path.write_bytes(_csv(rows, ";", bom=False))
    return path

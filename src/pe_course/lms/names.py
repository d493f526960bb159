"""What Canvas and Moodle bulk downloads call each file: student, LMS ids, lateness, file name.

Read from the LMSs' own code:

- **Canvas** (``lib/content_zipper.rb``): ``<name key>[_LATE]_<user id>_<attachment id>_<file name>``,
  flat. The name key is the *sortable name* (``Lestari, Ani``) lower-cased with every non-word
  character removed (``lestariani``; ``Yılmaz, Çağla`` → ``yılmazçağla``); older Canvas wrote a login
  and ``_late_``. An anonymised assignment writes ``anon_<anonymous id>`` instead of name and user id.
- **Moodle** (``mod/assign/classes/downloader.php``): ``<Full name>_<participant id>_assignsubmission_file``
  as a folder holding the student's files (Moodle ≥ 4.0), ``…_assignsubmission_file_/`` (3.x), or flat
  files ``…_assignsubmission_file_<file name>`` (both, "download as folders" off). Moodle replaces
  ``_`` in names by spaces and drops characters such as apostrophes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePath

CANVAS = re.compile(
    r"^(?P<key>.+?)(?:_(?P<late>LATE|late))?_(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)$", re.S
)
CANVAS_ANON = re.compile(
    r"^anon_(?P<anon>[A-Za-z0-9]+)(?:_(?P<late>LATE|late))?_(?P<attachment>\d+)_(?P<file>.+)$"
)
MOODLE_FOLDER = re.compile(
    r"^(?P<name>.+)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?P<v3>_?)$", re.S
)
MOODLE_FLAT = re.compile(r"^(?P<name>.+)_(?P<participant>\d+)_assignsubmission_file_(?P<file>.+)$", re.S)
# Canvas's Student View user ("Test Student", sortable name "Student, Test") is in every course.
CANVAS_TEST_STUDENT_KEYS = {"studenttest", "teststudent"}
TEST_STUDENT_NAMES = {"student, test", "test student"}


@dataclass(frozen=True)
class Entry:
    """One file of a bulk download, as the LMS named it."""

    lms: str  # "canvas" or "moodle"
    name: str  # Canvas's name key or Moodle's full name, as written
    lms_id: str  # Canvas user id (or "anon_…"), Moodle participant id
    file: str  # the student's own file name
    late: bool | None = None  # Canvas's flag; None: the name says nothing
    attachment: str = ""  # Canvas attachment id of this file
    layout: str = ""  # Moodle: "folder4", "folder3" or "flat"; Canvas: "flat"

    @property
    def test_student(self) -> bool:
        return self.lms == "canvas" and self.name in CANVAS_TEST_STUDENT_KEYS


def parse(relpath: str) -> Entry | None:
    """The entry a path inside an extracted download stands for (Moodle first: a Moodle folder
    name never matches Canvas's pattern as a whole path, a Canvas name never has a Moodle folder)."""
    path = PurePath(relpath.replace("\\", "/"))
    for folder in reversed(path.parents):
        match = MOODLE_FOLDER.match(folder.name)
        if match and match.group("plugin") == "file" and folder != path:
            inner = path.relative_to(folder).as_posix()
            layout = "folder3" if match.group("v3") else "folder4"
            return Entry("moodle", match.group("name"), match.group("participant"), inner, layout=layout)
        if match:  # onlinetext and other plugins: not files of the student
            return None
    flat = MOODLE_FLAT.match(path.name)
    if flat:
        return Entry(
            "moodle", flat.group("name"), flat.group("participant"), flat.group("file"), layout="flat"
        )
    anon = CANVAS_ANON.match(path.name)
    if anon:
        return Entry(
            "canvas",
            "",
            f"anon_{anon.group('anon')}",
            anon.group("file"),
            late=bool(anon.group("late")),
            attachment=anon.group("attachment"),
            layout="flat",
        )
    canvas = CANVAS.match(path.name)
    if canvas:
        return Entry(
            "canvas",
            canvas.group("key"),
            canvas.group("user"),
            canvas.group("file"),
            late=bool(canvas.group("late")),
            attachment=canvas.group("attachment"),
            layout="flat",
        )
    return None


def canvas_key(sortable_name: str) -> str:
    """Canvas's name key for a sortable name (``Nur'aini, Siti`` → ``nurainisiti``)."""
    name = re.sub(r"_(\d+)_", r"\1", sortable_name).lower()
    return re.sub(r"[^\w]", "", name)


def moodle_name(full_name: str) -> str:
    """A full name as Moodle writes it in a download's names: ``_`` → space, then ``clean_filename``
    (PARAM_FILE) drops control characters and ``& < > " ` | ' : \\ /``."""
    return re.sub(r"[\x00-\x1f\x7f&<>\"`|':\\/]", "", full_name.replace("_", " "))


def slug(name: str) -> str:
    """A student id made from a name: ``Ani Lestari`` -> ``ani-lestari``, ``Yılmaz`` -> ``yilmaz``."""
    text = unicodedata.normalize("NFKD", name.replace("ı", "i")).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "tanpa-nama"


def same_name(a: str, b: str) -> bool:
    """Two spellings of one name (case, spacing, punctuation and accents aside)."""
    return slug(moodle_name(a)).replace("-", "") == slug(moodle_name(b)).replace("-", "")

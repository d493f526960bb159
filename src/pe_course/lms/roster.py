"""Class lists as the LMSs export them, read with the csv module the way their importers read them.

- **Canvas gradebook export** (``lib/gradebook_exporter.rb``): ``Student`` (the sortable name, a name
  starting with ``=`` written as ``="…"``), ``ID`` (the Canvas user id), ``SIS User ID``, ``SIS Login
  ID``, ``Section``, then one column per assignment ``Title (id)``; a ``    Points Possible`` row (and
  possibly a ``Manual Posting`` row) before the students; the Test Student last.
- **Moodle grading worksheet** (assignment → "Download grading worksheet"): ``Identifier``
  (``Participant 12``), ``Full name``, the site's identity fields (``ID number``, ``Email address``),
  ``Status`` (``Submitted for grading - 2 hours 48 mins late``), ``Grade``, ``Maximum Grade``,
  ``Last modified (submission)`` (in the downloading user's time zone), ``Last modified (grade)``,
  ``Feedback comments``.
- **Moodle participants export**: ``First name``, ``Last name`` (``Surname`` before 4.x), identity
  fields; no full name and no participant id, so students are matched by first + last name.
- Any CSV with ``Full name``/``Nama`` and ``NPM``/``student_id``/``ID number`` columns.

The separator is found as Canvas's importer finds it (``,`` or ``;``, whichever gives a consistent
number of fields on the first lines); a UTF-8 byte-order mark is accepted.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from .names import TEST_STUDENT_NAMES, canvas_key, slug

ID_COLUMNS = ("student_id", "npm", "nim", "id number", "idnumber", "sis user id", "sis login id", "username")


class RosterError(ValueError):
    """A roster file that cannot be read as any of the known exports (message: one line)."""


@dataclass
class Person:
    """One student of a roster, with every identity the file gives."""

    student_id: str
    name: str  # full name ("Ani Lestari"), or Canvas's sortable name ("Lestari, Ani")
    lms_user_id: str = ""  # Canvas ID
    participant: str = ""  # Moodle participant id (from "Participant 12")
    status: str = ""  # Moodle worksheet status
    submitted: str = ""  # Moodle worksheet "Last modified (submission)", as written
    test_student: bool = False

    @property
    def canvas_key(self) -> str:
        return canvas_key(self.name)


@dataclass
class Table:
    """A CSV file as rows of strings, with how it was written (to write it back the same way)."""

    rows: list[list[str]]
    delimiter: str
    bom: bool
    newline: str

    @property
    def header(self) -> list[str]:
        return self.rows[0] if self.rows else []


def delimiter_of(lines: list[str]) -> str:
    """``;`` or ``,``, as Canvas's ``GradebookImporter#identify_delimiter`` decides it."""
    counts = {}
    for sep in (";", ","):
        sizes = {len(next(csv.reader([line], delimiter=sep), [])) for line in lines}
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def read_table(path: Path) -> Table:
    data = Path(path).read_bytes()
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RosterError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    newline = "\r\n" if "\r\n" in text[:4096] else "\n"
    first = [line for line in text.splitlines()[:3] if line.strip()]
    if not first:
        raise RosterError(f"{path}: empty file")
    delimiter = delimiter_of(first)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    return Table(rows=rows, delimiter=delimiter, bom=bom, newline=newline)


def write_table(table: Table, path: Path) -> Path:
    """Write rows back with the file's own separator, BOM and line ends (UTF-8, byte for byte for
    the cells given)."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=table.delimiter, lineterminator=table.newline)
    writer.writerows(table.rows)
    Path(path).write_bytes((b"\xef\xbb\xbf" if table.bom else b"") + out.getvalue().encode("utf-8"))
    return Path(path)


def kind_of(header: list[str]) -> str:
    """Which export a header row is: "canvas", "moodle-worksheet", "moodle-participants", "generic"."""
    cols = [h.strip().lower() for h in header]
    if len(cols) > 3 and (
        (cols[0] == "student" and cols[1] == "id") or cols[:3] == ["lastname", "firstname", "id"]
    ):
        return "canvas"
    if "identifier" in cols and "full name" in cols:
        return "moodle-worksheet"
    if "first name" in cols and ("last name" in cols or "surname" in cols):
        return "moodle-participants"
    return "generic"


def canvas_name_cell(cell: str) -> str:
    """The name in a Canvas export's name cell (``="=Budi"`` is how Canvas writes ``=Budi``)."""
    match = re.fullmatch(r'="(.*)"', cell.strip(), flags=re.S)
    return match.group(1) if match else cell.strip()


def is_canvas_extra_row(row: list[str]) -> bool:
    """The points-possible row and the manual-posting row of a Canvas export (no student)."""
    if row and "Points Possible" in row[0]:
        return True
    return all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c or "", flags=re.I) for c in row)


def read_people(path: Path) -> tuple[str, list[Person]]:
    """(kind of file, the students in it). Rows without any usable id or name are left out."""
    table = read_table(path)
    if not table.rows:
        raise RosterError(f"{path}: no header row")
    kind = kind_of(table.header)
    cols = [h.strip().lower() for h in table.header]
    people: list[Person] = []
    for row in table.rows[1:]:
        if not any(c.strip() for c in row):
            continue
        cell = dict(zip(cols, (c.strip() for c in row), strict=False))
        if kind == "canvas":
            if is_canvas_extra_row(row):
                continue
            if cols[0] == "lastname":
                name = f"{canvas_name_cell(row[0])}, {canvas_name_cell(row[1])}"
            else:
                name = canvas_name_cell(row[0])
            person = Person(_sid(cell) or cell.get("id", ""), name, lms_user_id=cell.get("id", ""))
        elif kind == "moodle-worksheet":
            name = cell.get("full name", "")
            person = Person(
                _sid(cell) or slug(name),
                name,
                participant=re.sub(r"\D", "", cell.get("identifier", "")),
                status=cell.get("status", ""),
                submitted=cell.get("last modified (submission)", ""),
            )
        elif kind == "moodle-participants":
            last = cell.get("last name", cell.get("surname", ""))
            name = f"{cell.get('first name', '')} {last}".strip()
            person = Person(_sid(cell) or slug(name), name)
        else:
            name = next((cell[k] for k in ("full name", "fullname", "name", "nama") if cell.get(k)), "")
            sid = _sid(cell)
            if not sid:
                continue
            part = re.sub(
                r"\D", "", next((cell[k] for k in ("identifier", "participant") if cell.get(k)), "")
            )
            person = Person(sid, name, participant=part)
        if not (person.student_id and person.name):
            continue
        person.test_student = person.name.strip().lower() in TEST_STUDENT_NAMES
        people.append(person)
    return kind, people


def _sid(cell: dict[str, str]) -> str:
    return next((cell[k] for k in ID_COLUMNS if cell.get(k)), "")

"""Which file an LMS export is, and where each column of a Moodle grading worksheet is, in any
language Moodle ships: recognised by the worksheet's structure, with English and Indonesian names.

Moodle writes the worksheet from ``mod/assign/gradingtable.php`` (downloading): the participant
column first (``Participant 12`` / ``Peserta 12``), then the full name, the site's identity fields,
the status, ``Grade`` directly followed by ``Maximum Grade`` (or ``Scale``) and ``Grade can be
changed``, the two "Last modified" times and the feedback plugins' text columns. Its headers are in
the downloading user's language, and Moodle's upload (``assignfeedback_offline_grade_importer::init``)
finds ``Identifier``, ``Grade`` and ``Last modified (grade)`` by exact name in the *uploading* user's
language: the headers are written back exactly as downloaded (upload with the same language).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .grades import ExportError, number_of
from .roster import Table, kind_of

# Moodle's strings (lang/en and the Indonesian language pack): assign recordid, core fullname,
# core grade, assign maxgrade, assign gradecanbechanged, assign lastmodifiedgrade,
# assignfeedback_comments pluginname, assign scale.
NAMES = {
    "identifier": ("identifier", "id"),
    "fullname": ("full name", "nama lengkap", "nama lengkap pengguna"),
    "grade": ("grade", "nilai"),
    "maximum": ("maximum grade", "nilai maksimum"),
    "changeable": ("grade can be changed", "nilai dapat diubah"),
    "modified": ("last modified (grade)", "terakhir diubah (nilai)"),
    "comments": ("feedback comments", "komentar umpan balik"),
    "scale": ("scale", "skala"),
}
NO = {"no", "tidak"}  # "Grade can be changed": Moodle's get_string('no') in English and Indonesian
YES_NO = NO | {"yes", "ya"}
PARTICIPANT = re.compile(r"^(\D+?)\s*(\d+)$")  # "Participant 12" (assign hiddenuser + unique id)


@dataclass(frozen=True)
class Columns:
    identifier: int
    fullname: int
    grade: int
    maximum: int
    modified: int
    changeable: int | None = None
    comments: int | None = None
    idnumber: int | None = None


def _values(table: Table, col: int) -> list[str]:
    return [r[col].strip() for r in table.rows[1:] if col < len(r) and r[col].strip()]


def _named(header: list[str], role: str) -> int | None:
    lower = [h.strip().lower() for h in header]
    return next((i for i, h in enumerate(lower) if h in NAMES[role]), None)


def participant_column(table: Table) -> int | None:
    """The column whose every value is one word and a number with one common prefix
    (``Participant 12``), whatever the language."""
    for col in range(len(table.header)):
        values = _values(table, col)
        found = [PARTICIPANT.match(v) for v in values]
        if values and all(found) and len({m.group(1) for m in found if m}) == 1:
            return col
    return None


def columns(table: Table) -> Columns:
    """Where each column Moodle's upload reads is, or one line saying why this is no worksheet."""
    header = table.header
    ident = participant_column(table)
    if ident is None:  # no participant yet (an empty class): by name, with the full name beside it
        named = _named(header, "identifier")
        if named is not None and _named(header, "fullname") == named + 1:
            ident = named
    if ident is None or ident + 1 >= len(header):
        raise ExportError("not a Moodle grading worksheet (no column of 'Participant N' identifiers)")
    maximum = _named(header, "maximum")
    if maximum is None and _named(header, "scale") is not None:
        raise ExportError(
            "the worksheet has no 'Maximum grade' column (graded with a scale?): points cannot be mapped"
        )
    if maximum is None:  # by structure: the column after Grade holding one number for everyone
        for col in range(ident + 2, len(header)):
            values = {number_of(v) for v in _values(table, col)}
            if len(values) == 1 and None not in values and _named(header, "grade") in (None, col - 1):
                maximum = col
                break
    if maximum is None:
        raise ExportError("the worksheet has no 'Maximum grade' column: points cannot be mapped")
    grade = maximum - 1  # gradingtable.php writes Maximum Grade right after Grade
    if any(number_of(v) is None for v in _values(table, grade) if v != "-"):
        raise ExportError(f"the worksheet's column {header[grade]!r} before the maximum holds non-grades")
    modified = _named(header, "modified")
    if modified is None:
        raise ExportError(
            "the worksheet has no 'Last modified (grade)' column, which Moodle's upload needs "
            "(English and Indonesian headers are recognised)"
        )
    changeable = maximum + 1 if maximum + 1 < len(header) else None
    if changeable is not None and not {v.lower() for v in _values(table, changeable)} <= YES_NO:
        changeable = _named(header, "changeable")
    lower = [h.strip().lower() for h in header]
    return Columns(
        identifier=ident,
        fullname=ident + 1,
        grade=grade,
        maximum=maximum,
        modified=modified,
        changeable=changeable,
        comments=_named(header, "comments"),
        idnumber=next((i for i, h in enumerate(lower) if h in ("id number", "nomor id")), None),
    )


def kind(table: Table) -> str:
    """What an export is, by its structure: "canvas", "moodle-worksheet", "moodle-participants",
    "roster" (any other class list) or "empty"."""
    if len(table.rows) < 2:
        return "empty"
    found = kind_of(table.header)
    if found in ("canvas", "moodle-participants"):
        return found
    if participant_column(table) is not None:
        try:
            columns(table)
        except ExportError:
            return "roster"
        return "moodle-worksheet"
    return "roster"


KIND_WORDS = {
    "canvas": "a Canvas gradebook export",
    "moodle-worksheet": "a Moodle grading worksheet",
    "moodle-participants": "a Moodle participants list (a roster, not a gradebook)",
    "roster": "a class roster or another CSV (not an LMS gradebook)",
    "empty": "an export without students",
}

"""Moodle: the filled grading worksheet and the class feedback zip.

**Grades.** The instructor's own grading worksheet (assignment → View all submissions → Download grading
worksheet), with ``Grade`` (scaled to its ``Maximum Grade``) and ``Feedback comments`` filled, everything
else as Moodle wrote it; its columns are found by structure (:mod:`.worksheet`), so a worksheet
downloaded in Indonesian is filled as well. Moodle's "Upload grading worksheet" (``assignfeedback_offline``,
``locallib.php`` ``process_import_grades``) finds students by ``Identifier`` (``Participant 12``), skips
an empty or unchanged grade, a row whose grade was changed in Moodle after the download (unless "Allow
updating records that have been modified more recently" is ticked: ``Last modified (grade)`` is kept as
downloaded) and a locked grade (``grading_disabled``) — but still writes that row's comment, so a row
whose ``Grade can be changed`` is ``No`` is left exactly as downloaded.

Participant numbers are per assignment (``assign::get_uniqueid_for_user``): a worksheet whose numbers
are not those of the download taken in belongs to another assignment and is refused.

**Feedback.** One zip with a folder per student named as in Moodle's download,
``<Full name>_<participant id>_assignsubmission_file/`` (``…_file_/`` for a Moodle 3.x download),
holding the feedback pages: "Upload multiple feedback files in a zip"
(``assignfeedback_file_zip_importer``) takes the participant id from the second ``_`` part of a
folder name and adds the files as that student's feedback files.
"""

from __future__ import annotations

import re
from pathlib import Path

from .collect import LATE_WORDS
from .grades import ExportError, Filled, Final, class_zip, number_of, number_text, text_cell
from .identities import Identity
from .names import slug
from .roster import Table
from .worksheet import NO, columns

COMMENT = (
    "Nilai tugas {assignment}: {score} dari {maximum} poin. Umpan balik lengkap ada di berkas umpan balik."
)
# Moodle's strftimedatetime in English, which strtotime reads ("Saturday, 21 November 2026, 07:48 PM")
ENGLISH_DATE = re.compile(r"^[A-Z][a-z]+day, \d{1,2} [A-Z][a-z]+ \d{4}, \d{1,2}:\d{2} [AP]M$")
TEXT_COLUMNS = ("full name", "email address", "id number", "username", "nama lengkap", "alamat email")


def fill(table: Table, finals: dict[str, Final], identities: dict[str, Identity], assignment: str) -> Filled:
    col = columns(table)
    header = table.header
    lower = [h.strip().lower() for h in header]
    status = lower.index("status") if "status" in lower else None
    mine = {sid: i for sid, i in identities.items() if i.lms == "moodle"}
    by_participant = {i.lms_id: sid for sid, i in mine.items()}
    notes: list[str] = []
    matched: set[str] = set()
    late: set[str] = set()
    elsewhere: list[str] = []
    rows = [list(header)]
    for row in table.rows[1:]:
        row = list(row) + [""] * (len(header) - len(row))
        if not any(c.strip() for c in row):
            rows.append(row)
            continue
        participant = re.sub(r"\D", "", row[col.identifier])
        who = f"{row[col.fullname]} ({row[col.identifier]})"
        sid = by_participant.get(participant)
        by_id = row[col.idnumber].strip() if col.idnumber is not None else ""
        if sid is not None and by_id in finals and by_id != sid:  # the number is someone else's here
            elsewhere.append(f"{who} (ID number {by_id}) is {sid} in the download taken in")
        if sid is None:
            sid = (
                by_id
                if by_id in finals
                else (slug(row[col.fullname]) if slug(row[col.fullname]) in finals else None)
            )
            if sid in mine:  # the download gave this student another participant number
                elsewhere.append(f"{who} is Participant {mine[sid].lms_id} in the download taken in")
            elif sid:
                notes.append(
                    f"{who} = {sid}: matched by ID number or name (no Moodle intake to check the number)"
                )
        for i, h in enumerate(lower):
            if h in TEXT_COLUMNS:
                row[i] = text_cell(row[i])
        rows.append(row)
        final = finals.get(sid) if sid else None
        if final is None:
            notes.append(f"{who}: not in nbgrader's gradebook: left as downloaded")
            continue
        matched.add(final.student_id)
        if status is not None and LATE_WORDS.search(row[status]):
            late.add(final.student_id)
        top = number_of(row[col.maximum])
        value = final.scaled(top)
        if col.changeable is not None and row[col.changeable].strip().lower() in NO:
            notes.append(
                f"{who} = {sid}: '{header[col.changeable]}' is {row[col.changeable]!r} in Moodle (locked or "
                "overridden in the gradebook): grade and comment left as downloaded; its pages are in the zip"
            )
        elif value is None:
            notes.append(f"{who} = {sid}: grade left as downloaded (Moodle keeps its own): {final.why}")
        elif top is None:
            notes.append(
                f"{who} = {sid}: left as downloaded: its maximum grade {row[col.maximum]!r} is no number"
            )
        else:
            row[col.grade] = number_text(value)
            if col.comments is not None and not row[col.comments].strip():
                row[col.comments] = COMMENT.format(
                    assignment=assignment, score=number_text(value), maximum=number_text(top)
                )
    if col.comments is None:
        notes.append("no 'Feedback comments' column recognised in the worksheet: no comment written")
    dates = [r[col.modified].strip() for r in table.rows[1:] if len(r) > col.modified]
    if any(d not in ("", "-") and not ENGLISH_DATE.match(d) for d in dates):
        notes.append(
            f"'{header[col.modified]}' holds dates Moodle's upload cannot read (PHP strtotime reads English "
            "only): it skips every row already graded in Moodle unless you tick 'Allow updating records "
            "that have been modified more recently in Moodle'"
        )
    if elsewhere:
        raise ExportError(
            f"not the worksheet of {assignment}: Moodle numbers participants per assignment and "
            f"{elsewhere[0]}"
            + (f" (and {len(elsewhere) - 1} more)" if len(elsewhere) > 1 else "")
            + f"; download the grading worksheet of {assignment}"
        )
    return Filled(Table(rows, table.delimiter, table.bom, table.newline), notes, matched, late)


def entry_name(rec: Identity, page: Path) -> str:
    """The page's name in the class zip: in the student's folder as Moodle's download names it."""
    return (
        f"{rec.name}_{rec.lms_id}_assignsubmission_file{'_' if rec.layout == 'folder3' else ''}/{page.name}"
    )


def feedback_zip(
    feedback_dir: Path, assignment: str, identities: dict[str, Identity], dest: Path
) -> list[str]:
    """The class feedback zip for Moodle; the lines naming every student left out of it."""
    return class_zip(feedback_dir, assignment, identities, "moodle", entry_name, dest)

"""Moodle: the filled grading worksheet and the class feedback zip.

**Grades.** The instructor's own grading worksheet (assignment → View all submissions → Download grading
worksheet), with ``Grade`` (scaled to its ``Maximum Grade``) and ``Feedback comments`` filled, everything
else as Moodle wrote it. Moodle's "Upload grading worksheet" (``assignfeedback_offline``) finds
students by ``Identifier`` (``Participant 12``), needs the ``Grade`` and ``Last modified (grade)``
columns, skips an empty grade, and skips a row whose grade was changed in Moodle after the
worksheet was downloaded (unless "Allow updating records that have been modified more recently in
Moodle" is ticked) — so that column is kept as downloaded.

**Feedback.** One zip with a folder per student named as in Moodle's download,
``<Full name>_<participant id>_assignsubmission_file/`` (``…_file_/`` for a Moodle 3.x download),
holding the feedback pages: "Upload multiple feedback files in a zip"
(``assignfeedback_file_zip_importer``) takes the participant id from the second ``_`` part of a
folder name and adds the files as that student's feedback files.
"""

from __future__ import annotations

import re
from pathlib import Path

from .grades import ExportError, Final, class_zip, number_of, number_text, text_cell
from .identities import Identity
from .names import slug
from .roster import Table, kind_of

COMMENT = (
    "Nilai tugas {assignment}: {score} dari {maximum} poin. Umpan balik lengkap ada di berkas umpan balik."
)
TEXT_COLUMNS = ("Full name", "Email address", "ID number", "Username")


def fill(
    table: Table, finals: dict[str, Final], identities: dict[str, Identity], assignment: str
) -> tuple[Table, list[str]]:
    if kind_of(table.header) != "moodle-worksheet":
        raise ExportError("not a Moodle grading worksheet (no Identifier and Full name columns)")
    header = table.header
    for needed in ("Grade", "Last modified (grade)"):
        if needed not in header:
            raise ExportError(f"the worksheet has no {needed!r} column, which Moodle's upload needs")
    ident, grade, name = header.index("Identifier"), header.index("Grade"), header.index("Full name")
    lower = [h.strip().lower() for h in header]
    maximum, comments, idnumber = (
        lower.index(c) if c in lower else None for c in ("maximum grade", "feedback comments", "id number")
    )
    if (
        maximum is None
    ):  # a scale ("Scale" column) or a hand-made file: Moodle would skip what is out of range
        raise ExportError(
            "the worksheet has no 'Maximum grade' column (graded with a scale?): points cannot be mapped"
        )
    by_participant = {i.lms_id: sid for sid, i in identities.items() if i.lms == "moodle"}
    notes: list[str] = []
    matched: set[str] = set()
    rows = [list(header)]
    for row in table.rows[1:]:
        row = list(row) + [""] * (len(header) - len(row))
        if not any(c.strip() for c in row):
            rows.append(row)
            continue
        participant = re.sub(r"\D", "", row[ident])
        sid = by_participant.get(participant)
        if sid is None and idnumber is not None and row[idnumber].strip() in finals:
            sid = row[idnumber].strip()
        sid = sid or (slug(row[name]) if slug(row[name]) in finals else None)
        for i, h in enumerate(header):
            if h in TEXT_COLUMNS:
                row[i] = text_cell(row[i])
        final = finals.get(sid) if sid else None
        who = f"{row[name]} ({row[ident]})"
        if final is None:
            notes.append(f"{who}: no student of the gradebook; left empty")
        else:
            matched.add(final.student_id)
            top = number_of(row[maximum])
            value = final.scaled(top)
            if value is None:
                notes.append(f"{who} = {sid}: left empty: {final.why}")
            elif top is None:
                notes.append(f"{who} = {sid}: left empty: its Maximum grade {row[maximum]!r} is not a number")
            else:
                row[grade] = number_text(value)
                if comments is not None and not row[comments].strip():
                    row[comments] = COMMENT.format(
                        assignment=assignment, score=number_text(value), maximum=number_text(top)
                    )
        rows.append(row)
    for sid in sorted(set(finals) - matched):
        notes.append(f"{sid}: in the gradebook, not in the worksheet ({finals[sid].why or 'graded'})")
    return Table(rows, table.delimiter, table.bom, table.newline), notes


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

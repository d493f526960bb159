r"""Canvas: the gradebook import CSV and the class feedback zip.

**Grades.** Built from the instructor's own gradebook export (Grades → Export → CSV), keeping only its
identity columns (as Canvas wrote them), this assignment's column scaled to its ``Points Possible``, and
the rows of students whose score is final. Canvas's importer (``app/models/gradebook_importer.rb``)
finds the separator on the first lines, matches students by ``ID`` (then SIS ids, then name), skips the
points-possible row, changes nothing in a column or for a student that is not in the file — and treats
an empty cell as a *change*: a blank where Canvas holds a grade posts ``null`` and clears it
(``no_change_to_value?``: a blank equals only a blank or ``-``). So a student whose score is not final,
who is excused in Canvas, or who is not in nbgrader's gradebook is left out of the file, never blank.
Other assignments' columns are left out too: a stale copy of them would undo a change made in Canvas
since the export.

**Feedback.** One zip of the feedback pages named as Canvas's download names files,
``<name key>[_LATE]_<user id>_<attachment id>_<notebook>.html``. Canvas's "Re-Upload Submissions"
(``app/models/abstract_assignment.rb``, ``infer_comment_context_from_filename``) takes the first two
all-digit ``_`` parts of a name (``split_filename.grep(/^\d+$/).take(2)``) as the user and an
attachment of that user's *current* submission, and attaches the file under that attachment's display
name (``display_name: attachment.display_name``): whatever the zip calls it, the student sees the
page under the name of the file they submitted. Each page is therefore attached to the submitted file
of the same notebook (feedback on ``01_embedding`` arrives as the student's ``01_embedding.ipynb``,
an HTML page inside); all of one student's files become one comment "See attached files"
(``generate_comments_from_files``: ``group_by { |f| f[:user] }``).
"""

from __future__ import annotations

import re
from pathlib import Path

from .grades import ExportError, Filled, Final, class_zip, number_of, number_text, text_cell
from .identities import Identity
from .names import canvas_key
from .roster import Table, canvas_name_cell, is_canvas_extra_row, kind_of

IDENTITY_COLUMNS = {  # gradebook_importer.rb GRADEBOOK_IMPORTER_RESERVED_NAMES
    "Student",
    "LastName",
    "FirstName",
    "ID",
    "SIS User ID",
    "SIS Login ID",
    "Section",
    "Integration ID",
    "Root Account",
}


def assignment_column(header: list[str], assignment: str, column: str = "") -> int:
    """The column of this assignment: ``column`` (a header, a title or a Canvas assignment id), or the
    one column whose title is the assignment's name (dashes, spaces and case aside)."""
    titled = [(i, h) for i, h in enumerate(header) if re.search(r"\(\d+\)\s*$", h)]
    if column:
        hits = [i for i, h in titled if column in (h, h.rsplit(" (", 1)[0], h.rsplit("(", 1)[1].rstrip(") "))]
    else:
        want = re.sub(r"[\W_]+", "", assignment.lower())
        hits = [i for i, h in titled if re.sub(r"[\W_]+", "", h.rsplit(" (", 1)[0].lower()) == want]
    if len(hits) != 1:
        shown = "; ".join(h for _, h in titled) or "none"
        what = f"--column {column!r}" if column else f"a column titled like {assignment!r}"
        raise ExportError(
            f"{'no' if not hits else 'more than one'} assignment column for {what} in the Canvas export "
            f"(its assignment columns: {shown}); name it with --column"
        )
    return hits[0]


def assignment_id(header_cell: str) -> str:
    """The Canvas assignment id of a column header ``Title (id)``."""
    return header_cell.rsplit("(", 1)[1].rstrip(") ")


def fill(
    table: Table, finals: dict[str, Final], identities: dict[str, Identity], assignment: str, column: str = ""
) -> Filled:
    """The import CSV (identity columns and this assignment's only), and what the instructor must know."""
    if kind_of(table.header) != "canvas":
        raise ExportError("not a Canvas gradebook export (its first columns are not Student, ID)")
    header = table.header
    col = assignment_column(header, assignment, column)
    keep = [i for i, h in enumerate(header[:col]) if h in IDENTITY_COLUMNS]
    if "Section" not in (header[i] for i in keep):  # gradebook_importer.rb header?: last identity column
        raise ExportError("the Canvas export has no Section column, which Canvas's importer needs")
    keep.append(col)
    notes: list[str] = []
    by_user = {i.lms_id: sid for sid, i in identities.items() if i.lms == "canvas"}
    keys = {i.name: sid for sid, i in identities.items() if i.lms == "canvas" and i.name}
    ids = [header.index(c) for c in ("ID", "SIS User ID", "SIS Login ID") if c in header]
    points = None
    matched: set[str] = set()
    rows = [[header[i] for i in keep]]
    for row in table.rows[1:]:
        row = list(row) + [""] * (len(header) - len(row))
        if not any(c.strip() for c in row) or is_canvas_extra_row(row):
            if row and "Points Possible" in row[0]:
                points = number_of(row[col])
                if points is None:
                    raise ExportError(f"{header[col]}: its Points Possible {row[col]!r} is not a number")
            rows.append([row[i] for i in keep])
            continue
        name = canvas_name_cell(row[0]) if header[0] == "Student" else f"{row[0]}, {row[1]}"
        canvas_id = row[header.index("ID")]
        if name.strip().lower() in ("student, test", "test student"):
            notes.append("Test Student (Student View): left out")
            continue
        sid = by_user.get(canvas_id)
        sid = sid or next((row[i] for i in ids if row[i] in finals), None) or keys.get(canvas_key(name))
        final = finals.get(sid) if sid else None
        if final is None:
            notes.append(f"{name} (Canvas ID {canvas_id}): not in nbgrader's gradebook: left out")
            continue
        matched.add(final.student_id)
        value = final.scaled(points)
        if value is None:
            notes.append(
                f"{name} ({sid}): left out, Canvas keeps its grade {row[col] or '(none)'}: {final.why}"
            )
        elif row[col].strip().upper() == "EX":
            notes.append(f"{name} ({sid}): excused in Canvas: left out")
        else:
            out = [text_cell(row[i]) if header[i] in IDENTITY_COLUMNS else row[i] for i in keep]
            out[-1] = number_text(value)
            rows.append(out)
    if points is None:
        raise ExportError("the Canvas export has no '    Points Possible' row; export it again from Canvas")
    return Filled(Table(rows, table.delimiter, table.bom, table.newline), notes, matched, set())


def entry_name(rec: Identity, page: Path) -> str | None:
    """The page's name in the class zip, as Canvas's download names the student's file (None: this
    student has no Canvas user and attachment id, e.g. anonymous grading)."""
    if not rec.lms_id.isdigit() or not rec.attachments:
        return None
    attachment = rec.attachments.get(page.stem, next(iter(rec.attachments.values())))
    return f"{rec.name}{'_LATE' if rec.late else ''}_{rec.lms_id}_{attachment}_{page.name}"


def feedback_zip(
    feedback_dir: Path, assignment: str, identities: dict[str, Identity], dest: Path
) -> list[str]:
    """The class feedback zip for Canvas; the lines naming every student left out of it, and every
    page that Canvas will show under another notebook's file name (no file of its own submitted)."""
    notes = class_zip(feedback_dir, assignment, identities, "canvas", entry_name, dest)
    for sid, rec in sorted(identities.items()):
        pages = sorted((feedback_dir / sid / assignment).glob("*.html"))
        alone = [
            p.stem for p in pages if rec.lms == "canvas" and rec.attachments and p.stem not in rec.attachments
        ]
        if alone:
            first = next(iter(rec.attachments))
            notes.append(f"{sid}: no file submitted for {', '.join(alone)}: shown under the file of {first}")
    return notes

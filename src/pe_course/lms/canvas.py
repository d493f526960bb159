"""Canvas: the gradebook import CSV and the class feedback zip.

**Grades.** Built from the instructor's own gradebook export (Grades → Export → CSV) so every identity
column, every other assignment and the read-only totals stay exactly as Canvas wrote them; only this
assignment's column is filled, scaled to its ``Points Possible``. Canvas's importer
(``lib/gradebook_importer.rb``) finds the separator on the first lines, matches students by ``ID``
(then SIS ids, then name), skips the points-possible row and treats an empty cell as "no change":
a student whose score is not final yet is left empty and named.

**Feedback.** One zip of the feedback pages named as Canvas's download names files,
``<name key>[_LATE]_<user id>_<attachment id>_<notebook>.html``: Canvas's "Upload submission comments"
(``Assignment#infer_comment_context_from_filename``) takes the first two numbers of a name as the
user and one of that submission's attachments, and adds the file as a comment to that submission.
"""

from __future__ import annotations

import re
from pathlib import Path

from .grades import ExportError, Final, class_zip, number_of, number_text, text_cell
from .identities import Identity
from .names import canvas_key
from .roster import Table, canvas_name_cell, is_canvas_extra_row, kind_of

IDENTITY_COLUMNS = {
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


def fill(
    table: Table, finals: dict[str, Final], identities: dict[str, Identity], assignment: str, column: str = ""
) -> tuple[Table, list[str]]:
    """The Canvas export with this assignment's scores filled in, and what the instructor must know."""
    if kind_of(table.header) != "canvas":
        raise ExportError("not a Canvas gradebook export (its first columns are not Student, ID)")
    header = table.header
    col = assignment_column(header, assignment, column)
    notes: list[str] = []
    by_user = {i.lms_id: sid for sid, i in identities.items() if i.lms == "canvas"}
    keys = {i.name: sid for sid, i in identities.items() if i.lms == "canvas" and i.name}
    ids = [header.index(c) for c in ("ID", "SIS User ID", "SIS Login ID") if c in header]
    names = [i for i, h in enumerate(header) if h in IDENTITY_COLUMNS]
    points = None
    matched: set[str] = set()
    rows = [list(header)]
    for row in table.rows[1:]:
        row = list(row) + [""] * (len(header) - len(row))
        if not any(c.strip() for c in row) or is_canvas_extra_row(row):
            if row and "Points Possible" in row[0]:
                points = number_of(row[col])
                if points is None:
                    raise ExportError(f"{header[col]}: its Points Possible {row[col]!r} is not a number")
            rows.append(row)
            continue
        name = canvas_name_cell(row[0]) if header[0] == "Student" else f"{row[0]}, {row[1]}"
        for i in names:
            row[i] = text_cell(row[i])
        if name.strip().lower() in ("student, test", "test student"):
            notes.append("Test Student (Student View): left as it is")
            rows.append(row)
            continue
        sid = by_user.get(row[header.index("ID")]) if "ID" in header else None
        sid = sid or next((row[i] for i in ids if row[i] in finals), None) or keys.get(canvas_key(name))
        final = finals.get(sid) if sid else None
        if final is None:
            notes.append(
                f"{name} (Canvas ID {row[header.index('ID')]}): no student of the gradebook; left empty"
            )
        elif final.scaled(points) is None:
            notes.append(f"{name} ({sid}): left empty: {final.why}")
            matched.add(final.student_id)
            row[col] = ""
        else:
            row[col] = number_text(final.scaled(points) or 0.0)
            matched.add(final.student_id)
        rows.append(row)
    if points is None:
        raise ExportError("the Canvas export has no '    Points Possible' row; export it again from Canvas")
    for sid in sorted(set(finals) - matched):
        notes.append(f"{sid}: in the gradebook, not in the Canvas export ({finals[sid].why or 'graded'})")
    return Table(rows, table.delimiter, table.bom, table.newline), notes


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
    """The class feedback zip for Canvas; the lines naming every student left out of it."""
    return class_zip(feedback_dir, assignment, identities, "canvas", entry_name, dest)

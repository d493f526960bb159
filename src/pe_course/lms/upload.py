"""The two files to upload to an LMS, written by ``pe-course export``: its grades file, filled in from
the LMS's own export, and the class feedback zip (with ``cell-points.csv`` beside them)."""

from __future__ import annotations

from pathlib import Path

from . import canvas, moodle
from .grades import ExportError, finals, write_cell_points
from .identities import load
from .roster import RosterError, read_table, write_table

SOURCE_HELP = {
    "canvas": "export the gradebook from Canvas (Grades → Export → CSV) and give it with --from",
    "moodle": "download the grading worksheet (the assignment's Submissions → Download grading worksheet) "
    "and give it with --from",
}
UPLOADS = {  # where each file goes, in the LMS's own words
    "canvas": ("Grades → Import", "the assignment's Re-Upload Submissions: each page becomes a comment"),
    "moodle": (
        "Submissions → Upload grading worksheet",
        "Submissions → Upload multiple feedback files in a zip",
    ),
}


def export(
    course, lms: str, source: Path, out: Path, column: str = "", only: set[str] | None = None
) -> tuple[list[Path], list[str]]:
    """The LMS's grades file (from its own export ``source``), its class feedback zip and the
    per-cell points CSV in ``out``; (files written, what the instructor must know). With ``only`` (the
    students a regrade changed) the grades file holds only their rows and the zip only their pages."""
    try:
        table = read_table(source)
    except (OSError, RosterError) as exc:
        raise ExportError(f"cannot read {source}: {exc}") from None
    identities = load(course.root, course.assignment)
    with course.gradebook(must_exist=True) as gb:
        scores = finals(gb, course.assignment)
        cells = write_cell_points(gb, course.assignment, out / "cell-points.csv")
    if only is not None:
        return _changed_only(course, lms, table, scores, identities, out, column, only, cells)
    if lms == "canvas":
        filled, notes = canvas.fill(table, scores, identities, course.assignment, column)
        grades = write_table(filled, out / "canvas-grades-import.csv")
        notes += canvas.feedback_zip(
            course.feedback, course.assignment, identities, out / "canvas-feedback.zip"
        )
        zipped = out / "canvas-feedback.zip"
    else:
        filled, notes = moodle.fill(table, scores, identities, course.assignment)
        grades = write_table(filled, out / "moodle-grading-worksheet.csv")
        notes += moodle.feedback_zip(
            course.feedback, course.assignment, identities, out / "moodle-feedback.zip"
        )
        zipped = out / "moodle-feedback.zip"
    for sid in sorted(scores):
        if sid not in identities or identities[sid].lms != lms:
            notes.append(
                f"{sid}: no {lms} identity from an intake (nbgrader zip_collect of its download): "
                "not in the feedback zip"
            )
        elif identities[sid].late and not identities[sid].time and scores[sid].score is not None:
            notes.append(
                f"{sid}: late per {lms.capitalize()} ({identities[sid].time_source}); no time, so no "
                f"nbgrader late penalty in the score sent: {lms.capitalize()}'s own late policy applies"
            )
    return [grades, zipped, cells], notes


UNWRITTEN = "\x00unwritten"  # marks the rows the fill did not write (students not among ``only``)


def fill_changed(lms, table, scores, identities, assignment: str, column: str, only: set[str]):
    """The LMS's grades file with only the rows of the students in ``only`` (the header and the LMS's own
    extra rows, e.g. Canvas's Points Possible, kept), each filled as the full export fills it; (table, notes)."""
    from .roster import Table, is_canvas_extra_row

    header = table.header
    if lms == "canvas":
        col = canvas.assignment_column(header, assignment, column)
    elif "Grade" in header:
        col = header.index("Grade")
    else:
        raise ExportError("the Moodle worksheet has no Grade column; download it again from Moodle")
    marked = [list(table.rows[0])]
    for row in table.rows[1:]:
        row = list(row) + [""] * (len(header) - len(row))
        if any(c.strip() for c in row) and not (lms == "canvas" and is_canvas_extra_row(row)):
            row[col] = UNWRITTEN
        marked.append(row)
    chosen = {sid: final for sid, final in scores.items() if sid in only}
    unfilled = Table(marked, table.delimiter, table.bom, table.newline)
    if lms == "canvas":
        filled, notes = canvas.fill(unfilled, chosen, identities, assignment, column)
    else:
        filled, notes = moodle.fill(unfilled, chosen, identities, assignment)
    rows = [row for row in filled.rows if len(row) <= col or row[col] != UNWRITTEN]
    notes = [n for n in notes if "no student of the gradebook" not in n and "left as it is" not in n]
    notes.append(f"changed only: {len(only)} students ({', '.join(sorted(only))}); no other student's row")
    return Table(rows, table.delimiter, table.bom, table.newline), notes


def _changed_only(course, lms, table, scores, identities, out, column, only, cells):
    """The grades file and the feedback zip of the students in ``only``: one upload after a regrade."""
    filled, notes = fill_changed(lms, table, scores, identities, course.assignment, column, only)
    name = "canvas-grades-import.csv" if lms == "canvas" else "moodle-grading-worksheet.csv"
    grades = write_table(filled, out / f"changed-{name}")
    zipped = out / f"changed-{lms}-feedback.zip"
    who = {sid: i for sid, i in identities.items() if sid in only}
    notes += (canvas if lms == "canvas" else moodle).feedback_zip(
        course.feedback, course.assignment, who, zipped
    )
    return [grades, zipped, cells], notes

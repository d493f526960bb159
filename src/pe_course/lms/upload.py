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


def export(course, lms: str, source: Path, out: Path, column: str = "") -> tuple[list[Path], list[str]]:
    """The LMS's grades file (from its own export ``source``), its class feedback zip and the
    per-cell points CSV in ``out``; (files written, what the instructor must know)."""
    try:
        table = read_table(source)
    except (OSError, RosterError) as exc:
        raise ExportError(f"cannot read {source}: {exc}") from None
    identities = load(course.root, course.assignment)
    with course.gradebook(must_exist=True) as gb:
        scores = finals(gb, course.assignment)
        cells = write_cell_points(gb, course.assignment, out / "cell-points.csv")
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

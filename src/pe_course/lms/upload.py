"""The two files to upload to an LMS, written by ``pe-course export``: its grades file, filled in from
the LMS's own export, and the class feedback zip (with ``cell-points.csv`` beside them).

Everything is decided before anything is written: a file that belongs elsewhere (another LMS's file, a
roster, another course's or assignment's export) is refused in one line, and so is a student of
nbgrader's gradebook missing from the LMS's file unless ``allow_missing``. The files are written to a
temporary folder beside ``out`` and moved in at the end, so a failure leaves the previous export whole.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from . import canvas, moodle
from .grades import ExportError, Filled, Final, finals, write_cell_points
from .identities import Identity, load
from .roster import RosterError, read_table, write_table
from .worksheet import KIND_WORDS, kind

SOURCE_HELP = {
    "canvas": "export the gradebook from Canvas (Grades → Export → CSV) and give it with --from",
    "moodle": "download the grading worksheet (the assignment's Submissions → Download grading worksheet) "
    "and give it with --from",
}
FILES = {"canvas": ("canvas-grades-import.csv", "canvas-feedback.zip"),
         "moodle": ("moodle-grading-worksheet.csv", "moodle-feedback.zip")}  # fmt: skip
UPLOAD_ORDER = {  # what to upload where, in this order, in the LMS's own words
    "canvas": (
        "Grades → Import ({grades}); then, in any order, the assignment's Submissions → Re-Upload "
        "Submissions ({zipped}): one comment per student, each page shown under the name of the file "
        "the student submitted for that notebook",
        "a student who resubmitted after your download is skipped by the re-upload (Canvas matches the "
        "attachment ids of the submission as it is now): download again and take it in first",
    ),
    "moodle": (
        "1. Submissions → Upload grading worksheet ({grades}), first; 2. then Submissions → Upload "
        "multiple feedback files in a zip ({zipped})",
        "the other way round, Moodle skips every grade as 'modified more recently in Moodle' (the zip's "
        "import touches each student's grade record)",
    ),
}
PINS = "lms-exports.json"  # .pe-course/: the Canvas assignment id each assignment's grades went to


def _pins(root: Path) -> dict:
    try:
        return json.loads((Path(root) / ".pe-course" / PINS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _refuse_elsewhere(lms: str, table, source: Path, identities: dict[str, Identity]) -> None:
    found = kind(table)
    wanted = "canvas" if lms == "canvas" else "moodle-worksheet"
    if found != wanted:
        other = (
            " (--lms moodle?)"
            if found == "moodle-worksheet"
            else " (--lms canvas?)"
            if found == "canvas"
            else ""
        )
        raise ExportError(f"{source.name} is {KIND_WORDS[found]}, not {KIND_WORDS[wanted]}{other}")
    others = {i.lms for i in identities.values()} - {lms}
    if identities and others and not any(i.lms == lms for i in identities.values()):
        raise ExportError(
            f"the class was taken in from a {'/'.join(sorted(others)).capitalize()} download, not {lms.capitalize()}: "
            f"export to the LMS it came from"
        )


def _late_notes(
    lms: str, scores: dict[str, Final], identities: dict[str, Identity], late: set[str]
) -> list[str]:
    """Every late student named with what happened to the score: nbgrader's penalty applied, or none
    applied (then the LMS's own late policy, or the instructor, must act). The same for both LMSs."""
    lines = []
    for sid, final in sorted(scores.items()):
        rec = identities.get(sid)
        said = rec is not None and rec.lms == lms and bool(rec.late)
        if final.score is None or not (said or sid in late):
            continue
        source = rec.time_source if said and rec else f"the {lms.capitalize()} file's Status"
        if final.penalty > 0:
            lines.append(
                f"{sid}: late per {source}: nbgrader's late penalty of {final.penalty:g} point(s) applied "
                f"in the score sent"
            )
        else:
            why = "no submission time from the LMS" if not (rec and rec.time) else "nbgrader's penalty is 0"
            lines.append(
                f"{sid}: LATE per {source}, sent WITHOUT a late penalty ({why}): apply "
                f"{lms.capitalize()}'s late policy or your own"
            )
    return lines


def export(
    course,
    lms: str,
    source: Path,
    out: Path,
    column: str = "",
    allow_missing: bool = False,
    only: set[str] | None = None,
) -> tuple[list[Path], list[str]]:
    """The LMS's grades file (from its own export ``source``), its class feedback zip and the
    per-cell points CSV in ``out``; (files written, what the instructor must know). With ``only`` (the
    students a regrade changed, ``pe-course export --changed-only``) only their grades and pages are sent:
    the other students are left out of Canvas's file and as downloaded in Moodle's, and out of the zip."""
    try:
        table = read_table(source)
    except (OSError, RosterError) as exc:
        raise ExportError(f"cannot read {source}: {exc}") from None
    identities = load(course.root, course.assignment)
    _refuse_elsewhere(lms, table, Path(source), identities)
    with course.gradebook(must_exist=True) as gb:
        scores = finals(gb, course.assignment)
    zipped_for = identities
    if only is not None:
        scores = {sid: final for sid, final in scores.items() if sid in only}
        zipped_for = {sid: rec for sid, rec in identities.items() if sid in only}
    filled: Filled
    pin = _pins(course.root).get(course.assignment, {}).get("canvas", "")
    if lms == "canvas":
        filled = canvas.fill(table, scores, identities, course.assignment, column)
        got = canvas.assignment_id(filled.table.header[-1])
        if pin and got != pin and not column:
            raise ExportError(
                f"this export's column {filled.table.header[-1]!r} is not Canvas assignment {pin}, where "
                f"earlier grades of {course.assignment} went (another course's export?); give --column {got} "
                "if the assignment really changed"
            )
    else:
        filled = moodle.fill(table, scores, identities, course.assignment)
    if scores and not filled.matched:
        raise ExportError(
            f"none of the {len(scores)} students of nbgrader's gradebook is in {Path(source).name}: "
            "an export of another course or class?"
        )
    missing = sorted(set(scores) - filled.matched)
    if missing and not allow_missing:
        raise ExportError(
            f"{len(missing)} student(s) of nbgrader's gradebook not in {Path(source).name}: "
            f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}; export again from the LMS, or give "
            "--allow-missing to send the others"
        )
    notes = list(filled.notes)
    if only is not None:  # everyone else is "not in nbgrader's gradebook" only for this upload
        notes = [n for n in notes if "not in nbgrader's gradebook" not in n]
        notes.append(
            f"changed only: {len(scores)} student(s) the latest regrade changed ({', '.join(sorted(scores))})"
        )
    notes += [f"{sid}: in nbgrader's gradebook, not in {Path(source).name}: nothing sent" for sid in missing]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        grades_name, zip_name = FILES[lms]
        written = [write_table(filled.table, tmp / grades_name)]
        maker = canvas.feedback_zip if lms == "canvas" else moodle.feedback_zip
        notes += maker(course.feedback, course.assignment, zipped_for, tmp / zip_name)
        written.append(tmp / zip_name)
        with course.gradebook(must_exist=True) as gb:
            written.append(write_cell_points(gb, course.assignment, tmp / "cell-points.csv"))
        out.mkdir(parents=True, exist_ok=True)
        for path in written:
            os.replace(path, out / path.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for sid in sorted(scores):
        if sid not in identities or identities[sid].lms != lms:
            notes.append(
                f"{sid}: no {lms} identity from an intake (nbgrader zip_collect of its download): "
                "not in the feedback zip"
            )
    notes += _late_notes(lms, scores, identities, filled.late)
    if lms == "canvas":
        _pin(course.root, course.assignment, canvas.assignment_id(filled.table.header[-1]))
    return [out / grades_name, out / zip_name, out / "cell-points.csv"], notes


def _pin(root: Path, assignment: str, canvas_assignment: str) -> None:
    pins = _pins(root)
    pins.setdefault(assignment, {})["canvas"] = canvas_assignment
    path = Path(root) / ".pe-course" / PINS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(pins, indent=1), encoding="utf-8")


def upload_lines(lms: str, files: list[Path]) -> list[str]:
    """What to upload where and in which order (printed by ``pe-course export``)."""
    first, why = UPLOAD_ORDER[lms]
    return [f"Upload to {lms.capitalize()}: " + first.format(grades=files[0], zipped=files[1]), f"  ({why})"]

"""``nbgrader export`` that writes a correct, spreadsheet-safe CSV.

nbgrader's ``CsvExportPlugin`` joins fields with commas without quoting: a comma in a name shifts the
columns, and a name such as ``=HYPERLINK(...)`` reaches the spreadsheet as a formula. This plugin
writes the same columns and rows with ``csv.writer`` and neutralises formula-like text, plus one
column ``manual_grading_pending``: how many written answers still wait for a grader (so a score
that is not final yet is visible in the spreadsheet).
Configured in nbgrader_config.py: ``c.ExportApp.plugin_class = "pe_course.lms.export.SafeCsvExportPlugin"``.
"""

from __future__ import annotations

import csv

from nbgrader.api import MissingEntry
from nbgrader.plugins.export import ExportPlugin

COLUMNS = [
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
    "manual_grading_pending",
]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> str:
    if value is None:
        return ""
    text = str(value)
    if isinstance(value, str) and text.startswith(_FORMULA_START):
        return "'" + text  # shown as text by spreadsheets, never evaluated
    return text


def pending_manual_grades(submission) -> int:
    """Written answers of a submission that no grader has scored yet."""
    return sum(1 for nb in submission.notebooks for grade in nb.grades if grade.needs_manual_grade)


class SafeCsvExportPlugin(ExportPlugin):
    """The rows of nbgrader's CsvExportPlugin, written with proper CSV quoting."""

    def export(self, gradebook) -> None:
        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = {str(a) for a in self.assignment}
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(COLUMNS)
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    row = {
                        "assignment": assignment.name,
                        "duedate": assignment.duedate,
                        "student_id": student.id,
                        "last_name": student.last_name,
                        "first_name": student.first_name,
                        "email": student.email,
                        "max_score": assignment.max_score,
                    }
                    try:
                        submission = gradebook.find_submission(assignment.name, student.id)
                    except MissingEntry:
                        row.update(
                            timestamp="",
                            raw_score=0.0,
                            late_submission_penalty=0.0,
                            score=0.0,
                            manual_grading_pending=0,
                        )
                    else:
                        penalty = submission.late_submission_penalty
                        row.update(
                            timestamp=submission.timestamp,
                            raw_score=submission.score,
                            late_submission_penalty=penalty,
                            score=submission.score - penalty,
                            manual_grading_pending=pending_manual_grades(submission),
                        )
                    writer.writerow([_cell(row[c]) for c in COLUMNS])

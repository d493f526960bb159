"""The instructor's grading report: one self-contained HTML file per assignment.

- :mod:`.collect` reads the course gradebook with nbgrader's API (submissions, per-notebook and
  per-cell scores, grades that ``needs_manual_grade``) and the ``.grading.json`` records the hidden
  graders wrote next to each autograded notebook (per-clause results: who lost which clause, with
  the failure charged to it and the checks that found it; misconceptions; notes);
- :mod:`.plots` draws the matplotlib plots (base64 PNG);
- :mod:`.render` fills ``templates/report.html.j2`` (Jinja2, autoescaped: everything from a
  submission or a record is untrusted text) and writes ``reports/<assignment>/report.html`` — inline
  CSS, no scripts, no server needed — and ``grades.csv`` next to it with nbgrader's own CSV exporter.

The report is instructor-facing and in English; clause texts, failure messages and misconception hints
are shown as written (Indonesian).

Runs in the instructor's process (``pe-course report``, ``grade``, ``demo``). Imports ``course``, ``lms``
(nbgrader's CSV export), the record and, for the hints of today's graders, ``suite``
(docs/architecture.md).
"""

from .collect import collect
from .data import CellStat, ClauseStat, Issue, MisconceptionStat, ReportData, StudentReport
from .render import export_grades, render_html, write_report

__all__ = [
    "CellStat",
    "ClauseStat",
    "Issue",
    "MisconceptionStat",
    "ReportData",
    "StudentReport",
    "collect",
    "export_grades",
    "render_html",
    "write_report",
]

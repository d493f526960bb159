"""Feedback for students: what they get back, readable offline, and how it reaches them.

- :class:`RenderMath` (an nbgrader ``GenerateFeedback`` preprocessor): the formulas of the markdown
  cells become MathML when the feedback is built, so a student on a campus network without internet
  sees them rendered (browsers draw MathML themselves; MathJax from the CDN is no longer needed).
- :func:`tidy` keeps only the HTML pages in ``feedback/<student>/<assignment>/``: nbgrader copies
  every file of the autograded folder there (the graders' ``.grading.json``, files a student added).
  nbgrader's own ``timestamp.txt`` and ``submission_secret.txt`` (of a submission that came through
  the exchange) stay beside them: ``nbgrader release_feedback`` needs both to publish the pages; they
  never reach a student (the exchange and the LMS zips carry the pages only).
- :func:`zip_for_lms` packs each student's pages into ``feedback-zips/<assignment>/<student>.zip``
  for courses that return feedback through an LMS instead of nbgrader's exchange.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from latex2mathml.converter import convert
from nbgrader.preprocessors import NbGraderPreprocessor

from .course import Course

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$", re.S)


def render_math(markdown: str) -> str:
    """``$…$`` and ``$$…$$`` outside code replaced by MathML (left as written if it cannot convert)."""
    parts = _CODE.split(markdown)
    for i in range(0, len(parts), 2):  # even parts are outside code
        parts[i] = _MATH.sub(_mathml, parts[i])
    return "".join(parts)


def _mathml(match: re.Match) -> str:
    display = match.group(1) is not None
    tex = match.group(1) if display else match.group(2)
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 (a formula it cannot read stays TeX, as before)
        return match.group(0)


class RenderMath(NbGraderPreprocessor):
    """Formulas in markdown cells rendered to MathML at build time (no internet needed to read them)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and "$" in cell.source:
            cell.source = render_math(cell.source)
        return cell, resources


NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")


def tidy(course: Course, student: str) -> list[str]:
    """Remove what the student should not get from their feedback folder; the names removed."""
    folder = course.feedback / student / course.assignment
    removed = []
    if not folder.is_dir():
        return removed
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.parent == folder and path.name in NBGRADER_FILES and not path.is_symlink():
            continue  # needed by release_feedback (see above)
        if path.is_symlink() or (path.is_file() and path.suffix.lower() != ".html"):
            path.unlink()
            removed.append(str(path.relative_to(folder)))
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return removed


def zip_for_lms(course: Course, students: list[str]) -> Path:
    """One zip per student with their feedback pages; the folder holding them."""
    out = course.root / "feedback-zips" / course.assignment
    out.mkdir(parents=True, exist_ok=True)
    for student in students:
        folder = course.feedback / student / course.assignment
        pages = sorted(p for p in folder.glob("*.html") if p.is_file() and not p.is_symlink())
        if not pages:
            continue
        tmp = out / f".{student}.zip.tmp"
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for page in pages:
                zf.write(page, f"{course.assignment}/{page.name}")
        tmp.replace(out / f"{student}.zip")
    return out

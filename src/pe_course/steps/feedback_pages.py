"""Feedback pages for students: what they get back, readable offline, and how it reaches them (the text
of a graded test cell comes from its record: :mod:`pe_course.record.feedback`).

- :class:`RenderMath` (an nbgrader ``GenerateFeedback`` preprocessor): the formulas of the markdown
  cells become MathML when the feedback is built, so a student on a campus network without internet
  sees them rendered (browsers draw MathML themselves; MathJax from the CDN is no longer needed).
- :class:`FeedbackExporter`: nbgrader's HTML exporter, the same pages for less work per student
  (``c.GenerateFeedback.exporter_class``);
- :func:`tidy` keeps only the HTML pages in ``feedback/<student>/<assignment>/``: nbgrader copies
  every file of the autograded folder there (the graders' ``.grading.json``, files a student added).
  nbgrader's own ``timestamp.txt`` and ``submission_secret.txt`` (of a submission that came through
  the exchange) stay beside them: ``nbgrader release_feedback`` needs both to publish the pages; they
  never reach a student (the exchange and the LMS zips carry the pages only).
- :func:`zip_for_lms` packs each student's pages into ``feedback-zips/<assignment>/<student>.zip``
  for courses that return feedback through an LMS instead of nbgrader's exchange.
"""

from __future__ import annotations

import copy
import functools
import re
import zipfile
from pathlib import Path

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from latex2mathml.converter import convert
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbgrader.preprocessors import NbGraderPreprocessor

from ..course import Course

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
    return _converted(tex.strip(), "block" if display else "inline") or match.group(0)


@functools.lru_cache(maxsize=4096)
def _converted(tex: str, display: str) -> str | None:
    """MathML for a formula, None if it cannot be converted. Cached: every student's notebook has the
    chapter's formulas, and a worker renders many students' feedback."""
    try:
        return convert(tex, display=display)
    except Exception:  # noqa: BLE001 (a formula it cannot read stays TeX, as before)
        return None


class RenderMath(NbGraderPreprocessor):
    """Formulas in markdown cells rendered to MathML at build time (no internet needed to read them)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and "$" in cell.source:
            cell.source = render_math(cell.source)
        return cell, resources


class _CompiledTemplates(BytecodeCache):
    """Compiled Jinja templates kept in this process's memory, checked against the template's source
    (a changed file is compiled again)."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)  # ignored when the source's checksum differs

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_TEMPLATES = _CompiledTemplates()


NO_ALT_TEXT = "No description has been provided for this image"  # nbconvert's words
_IMAGES = ("image/png", "image/jpeg")
_IMG_TAG = re.compile(r"<img\b[^>]*>", re.I)
_FOCUSABLE = ("jp-Cell-inputWrapper", "jp-OutputArea-output")


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter, configured as nbgrader's ``GenerateFeedback`` configures it, for the
    same pages at less cost per student:

    - its templates are compiled once per process (nbgrader builds a new exporter for every student);
    - nbconvert's last step parses the whole page with BeautifulSoup to give images without a
      description nbconvert's alternative text and the JupyterLab template's cells a ``tabindex``,
      then writes the page out again (0.15-0.25 s a page, half of a page's cost). Here the images get
      that text before the page is made, and the page is kept as the template wrote it: the same
      document (the test compares it with nbconvert's, parsed). A page that would still need the pass
      (an ``<img>`` without ``alt``, e.g. raw HTML in a markdown cell, or a JupyterLab template) gets it.

    Only the instructor's and nbconvert's template files are compiled (a notebook is data for them).
    """

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = _TEMPLATES
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        nb = _with_alt_text(nb)
        given = dict(resources) if resources is not None else None
        langinfo = nb.metadata.get("language_info", {})  # as HTMLExporter.from_notebook_node
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources
        )
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        if _needs_soup(html):
            return super().from_notebook_node(nb, given, **kw)
        return html, resources


def _with_alt_text(nb):
    """The notebook with nbconvert's alternative text on every image output that would have none (as
    its template decides: the output's ``alt`` for the image type, its own, then the cell's); a copy
    when any is added."""

    def lacking(cell) -> list[tuple[dict, str]]:
        metadata = cell.get("metadata")
        if cell.get("cell_type") != "code" or (isinstance(metadata, dict) and metadata.get("alt")):
            return []
        found = []
        for out in cell.get("outputs") or []:
            meta = out.get("metadata") or {}
            for mime in _IMAGES:
                if mime in (out.get("data") or {}):
                    per_type = meta.get(mime)
                    alt = per_type.get("alt") if isinstance(per_type, dict) else None
                    if not (alt if alt is not None else meta.get("alt")):
                        found.append((out, mime))
        return found

    if not any(lacking(cell) for cell in nb.cells):
        return nb
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        for out, mime in lacking(cell):
            meta = out.setdefault("metadata", {})
            if not isinstance(meta.get(mime), dict):
                meta[mime] = {}
            meta[mime]["alt"] = NO_ALT_TEXT
    return nb


_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_ALT = re.compile(r"\salt\s*=", re.I)


def _needs_soup(html: str) -> bool:
    """Whether nbconvert's BeautifulSoup pass would change more than the page's layout: an image
    without ``alt`` (attribute values left out of the search) or a JupyterLab template's cells."""
    if any(name in html for name in _FOCUSABLE):
        return True
    return any(not _ALT.search(_QUOTED.sub('""', tag)) for tag in _IMG_TAG.findall(html))


NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")


def tidy(course: Course, student: str) -> list[str]:
    """Remove what the student should not get from their feedback folder; the names removed."""
    folder = course.feedback / student / course.assignment
    removed: list[str] = []
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

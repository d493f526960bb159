"""The instructor's grading report: one self-contained HTML file per assignment.

:func:`collect` reads the course gradebook with nbgrader's API (submissions, per-notebook and
per-cell scores, grades that ``needs_manual_grade``) and the ``.grading.json`` records the hidden
graders wrote next to each autograded notebook (per-check results, misconceptions, notes).
:func:`write_report` renders ``reports/<assignment>/report.html`` — inline CSS, matplotlib plots as
base64 PNG ``<img>`` elements, no scripts, no server needed — and ``grades.csv`` next to it with
nbgrader's own CSV exporter.

Everything taken from a submission or a record (student ids, notes, check messages, even titles
and ids in a record) is untrusted: it is escaped with :func:`html.escape` before it reaches the
HTML and rendered as plain text (no mathtext) in the plots. The report is instructor-facing and in
English; misconception hints and check titles/messages are shown as written (Indonesian).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import re
import statistics
import warnings
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import cgroups
from .course import Course

MAX_RECORD_BYTES = 20 * 1024 * 1024
MAX_NOTES = 50  # per record: a hostile record cannot flood the attention table
EPS = 1e-9
TAMPERING = "suspected-tampering"

# Kinds of attention issue, in the order the report explains them.
ISSUE_TEXT = {
    "no-submission": "in the gradebook, but no submission for this assignment",
    "not-graded": "submitted, but not in the gradebook (not autograded yet, or grading failed)",
    "missing-notebook": "notebook not submitted (scored 0 by nbgrader)",
    "no-grading-record": "notebook submitted but no .grading.json record (not autograded?)",
    "unreadable-grading-record": "the .grading.json record could not be read",
    "record-mismatch": "the .grading.json record names another student",
    "timeout": "time-out",
    "crashed": "crash while grading",
    "late": "submitted after the due date",
    "resource-limit": "went over a resource-group limit (memory, processes, CPU or scratch files)",
    "resource-near": "came close to a resource-group limit",
    "unreadable-notebook": "unreadable notebook: the released stub was graded instead",
    "repaired-metadata": "nbgrader cell metadata was repaired",
    "dropped-metadata": "invalid nbgrader cell metadata was dropped",
    "restored-cell": "a deleted test cell was restored",
    "execution": "the notebook did not finish running",
    "grader-error": "the graders failed on this notebook (scored 0)",
    TAMPERING: "suspected tampering",
    "note": "grading note",
}
# Notes in a record ("<kind>: detail") that the report names; any other note is shown as "note".
NOTE_KINDS = frozenset({"unreadable-notebook", "repaired-metadata", "dropped-metadata", "restored-cell",
                        "execution", "grader-error", TAMPERING})


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------
@dataclass
class Issue:
    """Why a student needs a look (one line of the attention table)."""

    student: str
    notebook: str  # "" when it concerns the whole assignment
    kind: str  # a key of ISSUE_TEXT
    detail: str = ""


@dataclass
class StudentReport:
    student: str
    scores: dict[str, float]  # notebook -> score in the gradebook
    raw_total: float
    penalty: float
    cell_scores: dict[tuple[str, str], float] = field(default_factory=dict)  # (notebook, grade id) -> score
    missing: list[str] = field(default_factory=list)  # notebooks not submitted
    manual: list[tuple[str, str]] = field(default_factory=list)  # (notebook, grade id) needing a manual grade
    issues: list[Issue] = field(default_factory=list)

    @property
    def total(self) -> float:
        """The final score, as nbgrader's export computes it (late penalty applied, never below 0)."""
        return max(0.0, self.raw_total - self.penalty)


@dataclass
class CellStat:
    """An autograded test cell over the students who submitted its notebook."""

    notebook: str
    grade_id: str
    max_score: float
    scores: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)  # record status -> students

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def full(self) -> int:
        return sum(1 for s in self.scores if s >= self.max_score - EPS)

    @property
    def pass_rate(self) -> float | None:
        """Share of students with full marks on the cell."""
        return self.full / self.n if self.n else None

    @property
    def mean_fraction(self) -> float | None:
        if not self.n or self.max_score <= 0:
            return None
        return sum(self.scores) / self.n / self.max_score


@dataclass
class CheckStat:
    """One check of a test cell, from the .grading.json records."""

    notebook: str
    grade_id: str
    name: str
    title: str
    max_points: float
    n: int = 0
    passed: int = 0
    messages: Counter = field(default_factory=Counter)  # failure message -> students

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.n if self.n else None


@dataclass
class MisconceptionStat:
    function: str
    id: str
    hint: str | None  # None: not in graders/misconceptions.py
    students: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass
class ReportData:
    assignment: str
    generated: datetime
    duedate: datetime | None
    notebooks: list[str]
    notebook_max: dict[str, float]
    students: list[StudentReport]
    cells: list[CellStat]
    checks: list[CheckStat]
    misconceptions: list[MisconceptionStat]  # most frequent first
    no_submission: list[str] = field(default_factory=list)  # in the gradebook, no submission
    not_graded: list[str] = field(default_factory=list)  # in submitted/, not in the gradebook

    @property
    def max_total(self) -> float:
        return sum(self.notebook_max.values())

    @property
    def totals(self) -> list[float]:
        return [s.total for s in self.students]

    @property
    def mean_total(self) -> float | None:
        return statistics.fmean(self.totals) if self.students else None

    @property
    def median_total(self) -> float | None:
        return statistics.median(self.totals) if self.students else None

    @property
    def manual(self) -> list[tuple[str, str, str]]:
        """(student, notebook, grade id) of every grade that needs a manual grade."""
        return [(s.student, nb, gid) for s in self.students for nb, gid in s.manual]

    @property
    def issues(self) -> list[Issue]:
        extra = [Issue(s, "", "no-submission") for s in self.no_submission]
        extra += [Issue(s, "", "not-graded") for s in self.not_graded]
        return sorted([i for s in self.students for i in s.issues] + extra, key=lambda i: (i.student, i.notebook))

    def student(self, student_id: str) -> StudentReport | None:
        return next((s for s in self.students if s.student == student_id), None)


# --------------------------------------------------------------------------------------------
# Collecting
# --------------------------------------------------------------------------------------------
def _gradebook(course: Course):
    """nbgrader's Gradebook for the course (never creates a missing SQLite gradebook)."""
    from nbgrader.api import Gradebook

    coursedir = course.coursedir()
    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).is_file():
        raise FileNotFoundError(f"no gradebook at {url}; run `nbgrader generate_assignment` and autograde first")
    # the course's own course id: Gradebook(url) alone would add a "default_course" row
    return Gradebook(url, course_id=coursedir.course_id or "default_course")


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _num(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def _items(value: Any) -> list:
    return value if isinstance(value, list) else []


def _read_record(path: Path) -> tuple[dict | None, str]:
    """A .grading.json record as a dict, or (None, why) when there is none or it is unreadable."""
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            return None, f"larger than {MAX_RECORD_BYTES // 2**20} MB"
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    return data, ""


def _note_issue(student: str, notebook: str, note: str) -> Issue:
    kind = next((k for k in sorted(NOTE_KINDS) if note.startswith(k)), "note")
    return Issue(student, notebook, kind, note[:1000])


def _hints(course: Course) -> dict[tuple[str, str], str]:
    """(function, misconception id) -> hint, from the catalogue in graders/misconceptions.py."""
    from .grading import load_suite

    try:
        suite = load_suite(course.graders)
    except Exception:  # noqa: BLE001 (no graders here: the report still works, without hints)
        return {}
    return {(m.function, m.id): m.hint for found in suite.misconceptions.values() for m in found}


def collect(course: Course) -> ReportData:
    """Everything the report shows, from the gradebook (nbgrader's API) and the grading records."""
    generated = datetime.now().astimezone()
    with _gradebook(course) as gb:
        assignment = gb.find_assignment(course.assignment)
        duedate = assignment.duedate
        notebooks = [nb.name for nb in assignment.notebooks]
        notebook_max = {nb.name: float(nb.max_score or 0.0) for nb in assignment.notebooks}
        cells: dict[tuple[str, str], CellStat] = {}
        for nb in assignment.notebooks:
            for gc in nb.grade_cells:
                if gc.cell_type == "code":  # test cells are autograded; markdown ones are written answers
                    cells[(nb.name, gc.name)] = CellStat(nb.name, gc.name, float(gc.max_score or 0.0))
        students: list[StudentReport] = []
        for sub in assignment.submissions:
            by_nb = {snb.name: snb for snb in sub.notebooks}
            report = StudentReport(sub.student.id, {}, float(sub.score or 0.0),
                                   float(sub.late_submission_penalty or 0.0))
            late = float(sub.total_seconds_late or 0.0)
            if late > 0:  # the timestamp the LMS stored (zip_collect) or nbgrader's exchange, after the due date
                report.issues.append(Issue(sub.student.id, "", "late",
                                           f"submitted {late / 3600:.1f} h after the due date "
                                           f"(timestamp {sub.timestamp}, penalty {report.penalty:g})"))
            for name in notebooks:
                snb = by_nb.get(name)
                report.scores[name] = float(snb.score or 0.0) if snb is not None else 0.0
                for grade in (snb.grades if snb is not None else []):
                    report.cell_scores[(name, grade.name)] = float(grade.score or 0.0)
                    if grade.needs_manual_grade:
                        report.manual.append((name, grade.name))
            students.append(report)
        submitted_ids = {s.student for s in students}
        no_submission = sorted(s.id for s in gb.students if s.id not in submitted_ids)

    students.sort(key=lambda s: s.student)
    hints = _hints(course)
    checks: dict[tuple[str, str, str], CheckStat] = {}
    diagnosed: dict[tuple[str, str], set[str]] = {}
    for report in students:
        _read_student(course, report, notebooks, cells, checks, diagnosed)

    misconceptions = [MisconceptionStat(fn, mid, hints.get((fn, mid)), sorted(who))
                      for (fn, mid), who in diagnosed.items()]
    misconceptions.sort(key=lambda m: (-m.count, m.function, m.id))
    # submitted/ but no submission in the gradebook: not graded (yet), whether or not nbgrader knows the student
    not_graded = sorted(set(_submitted_students(course)) - {s.student for s in students})
    no_submission = [s for s in no_submission if s not in not_graded]
    return ReportData(course.assignment, generated, duedate, notebooks, notebook_max, students,
                      list(cells.values()), list(checks.values()), misconceptions,
                      no_submission=no_submission, not_graded=not_graded)


def _submitted_students(course: Course) -> list[str]:
    folder = course.submitted
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / course.assignment).is_dir())


def _read_student(course: Course, report: StudentReport, notebooks: list[str],
                  cells: dict[tuple[str, str], CellStat], checks: dict[tuple[str, str, str], CheckStat],
                  diagnosed: dict[tuple[str, str], set[str]]) -> None:
    student = report.student
    submitted = course.submitted / student / course.assignment
    graded = course.autograded / student / course.assignment
    for name in notebooks:
        if not (submitted / f"{name}.ipynb").is_file() and not (graded / f"{name}.ipynb").is_file():
            report.missing.append(name)
            report.issues.append(Issue(student, name, "missing-notebook"))
            continue
        for (nb, gid), stat in cells.items():
            if nb == name:
                stat.scores.append(report.cell_scores.get((nb, gid), 0.0))
        record, problem = _read_record(graded / f"{name}.grading.json")
        if record is None:
            kind = "unreadable-grading-record" if problem else "no-grading-record"
            report.issues.append(Issue(student, name, kind, problem))
            continue
        named = record.get("student")
        if isinstance(named, str) and named != student:
            report.issues.append(Issue(student, name, "record-mismatch", f"record is for {named[:200]}"))
        for note in _items(record.get("notes"))[:MAX_NOTES]:
            if isinstance(note, str):
                report.issues.append(_note_issue(student, name, note))
        timed_out = [i for i in _items(record.get("timed_out_cells")) if isinstance(i, int)]
        if timed_out:
            report.issues.append(Issue(student, name, "timeout",
                                       f"notebook cell(s) {', '.join(map(str, timed_out[:20]))} timed out "
                                       "while the notebook ran"))
        for kind, detail in cgroups.attention(record.get("resources")):
            report.issues.append(Issue(student, name, kind, detail))
        for cell in _items(record.get("cells")):
            if isinstance(cell, dict):
                _read_cell(report, name, cell, cells, checks, diagnosed)


def _read_cell(report: StudentReport, notebook: str, cell: dict, cells: dict[tuple[str, str], CellStat],
               checks: dict[tuple[str, str, str], CheckStat], diagnosed: dict[tuple[str, str], set[str]]) -> None:
    gid = _text(cell.get("grade_id"))
    function = _text(cell.get("function"), gid.removeprefix("test_"))
    status = _text(cell.get("status"), "unknown")
    stat = cells.get((notebook, gid))
    if stat is not None:
        stat.statuses[status] += 1
    if status in ("timeout", "crashed", "resource-limit"):
        report.issues.append(Issue(report.student, notebook, status, f"{gid} ({function})"))
    for chk in _items(cell.get("checks")):
        if not isinstance(chk, dict):
            continue
        name = _text(chk.get("name"), "?")
        key = (notebook, gid, name)
        if key not in checks:
            checks[key] = CheckStat(notebook, gid, name, _text(chk.get("title"), name), _num(chk.get("max_points")))
        cs = checks[key]
        cs.n += 1
        if chk.get("passed") is True:
            cs.passed += 1
        else:
            message = _text(chk.get("message")).strip()
            if message:
                cs.messages[message[:300]] += 1
    for mid in _items(cell.get("misconceptions")):
        if isinstance(mid, str) and mid:
            diagnosed.setdefault((function, mid), set()).add(report.student)


# --------------------------------------------------------------------------------------------
# Plots (matplotlib Figure objects with the Agg canvas: no pyplot, no global state)
# --------------------------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _plain(text: str, limit: int = 80) -> str:
    """Untrusted text for a matplotlib label: no mathtext, no control characters, bounded length."""
    text = _CONTROL.sub(" ", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    # every "$" escaped: matplotlib then never parses mathtext and shows the text as it was
    return text.replace("$", r"\$")


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> str:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a glyph missing from the font in an untrusted label
        fig.savefig(buf, format="png", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _bins(maximum: float) -> list[float]:
    width = max(1.0, math.ceil(maximum / 20)) if maximum > 0 else 1.0
    edges = [0.0]
    while edges[-1] < maximum - EPS or len(edges) < 2:
        edges.append(edges[-1] + width)
    return edges


def _short(notebook: str) -> str:
    return notebook.split("_", 1)[0] if re.match(r"^\d+_", notebook) else notebook


def plot_total_histogram(data: ReportData) -> str:
    fig = _figure(7.5, 3.2)
    ax = fig.add_subplot()
    totals = data.totals
    ax.hist(totals, bins=_bins(data.max_total), color="#4c72b0", edgecolor="white")
    if totals:
        ax.axvline(data.mean_total, color="#c44e52", linestyle="--", label=f"mean {data.mean_total:.2f}")
        ax.axvline(data.median_total, color="#55a868", linestyle=":", linewidth=2,
                   label=f"median {data.median_total:.2f}")
        ax.legend(loc="upper right", frameon=False)
    ax.set_xlim(0, max(data.max_total, 1))
    ax.set_xlabel(f"Total score (max {data.max_total:g})")
    ax.set_ylabel("Students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"Total scores ({len(totals)} students)")
    return _png(fig)


def plot_notebook_histograms(data: ReportData) -> str:
    k = max(1, len(data.notebooks))
    fig = _figure(max(7.5, 2.4 * k), 2.6)
    axes = fig.subplots(1, k, squeeze=False, sharey=True)[0]
    for ax, name in zip(axes, data.notebooks, strict=False):
        scores = [s.scores[name] for s in data.students if name not in s.missing]
        ax.hist(scores, bins=_bins(data.notebook_max[name]), color="#8172b2", edgecolor="white")
        if not scores:
            ax.text(0.5, 0.5, "no submissions", transform=ax.transAxes, ha="center", va="center",
                    color="#777777", fontsize=9)
        ax.set_xlim(0, max(data.notebook_max[name], 1))
        ax.set_title(f"{_plain(name, 30)} (n={len(scores)})", fontsize=9)
        ax.set_xlabel(f"score (max {data.notebook_max[name]:g})", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
    axes[0].set_ylabel("Students", fontsize=8)
    return _png(fig)


def _sorted_cells(data: ReportData) -> list[CellStat]:
    order = {nb: i for i, nb in enumerate(data.notebooks)}
    present = [c for c in data.cells if c.n]
    return sorted(present, key=lambda c: (c.pass_rate, c.mean_fraction or 0.0, order.get(c.notebook, 0), c.grade_id))


def plot_cell_pass_rates(data: ReportData) -> str:
    cells = _sorted_cells(data)
    fig = _figure(max(7.5, 0.55 * len(cells) + 1.5), 4.2)
    ax = fig.add_subplot()
    x = range(len(cells))
    rates = [100 * c.pass_rate for c in cells]
    ax.bar(x, rates, color=[_rate_color(c.pass_rate) for c in cells], label="full marks")
    ax.plot(x, [100 * (c.mean_fraction or 0.0) for c in cells], "o", color="#333333", markersize=5,
            label="mean % of points")
    ax.set_xticks(list(x), [_plain(f"{_short(c.notebook)} · {c.grade_id}", 40) for c in cells],
                  rotation=45, ha="right", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of students")
    ax.set_title("Test cells: students with full marks (worst first)")
    ax.legend(loc="upper left", frameon=False, fontsize=8)
    return _png(fig)


def _rate_color(rate: float | None):
    from matplotlib import colormaps

    return colormaps["RdYlGn"](0.1 + 0.8 * (rate or 0.0))


def _grouped_checks(data: ReportData) -> list[tuple[CellStat | None, str, str, list[CheckStat]]]:
    """Checks grouped by cell, worst cell first; each group's checks worst first."""
    groups: dict[tuple[str, str], list[CheckStat]] = {}
    for c in data.checks:
        if c.n:
            groups.setdefault((c.notebook, c.grade_id), []).append(c)
    cells = {(c.notebook, c.grade_id): c for c in data.cells}

    def rank(key):
        members = groups[key]
        cell = cells.get(key)
        rate = cell.pass_rate if cell is not None and cell.pass_rate is not None else 1.0
        return (rate, sum(m.passed for m in members) / sum(m.n for m in members), key)

    out = []
    for key in sorted(groups, key=rank):
        members = sorted(groups[key], key=lambda c: (c.pass_rate, c.name))
        out.append((cells.get(key), key[0], key[1], members))
    return out


def plot_check_pass_rates(data: ReportData) -> str:
    groups = _grouped_checks(data)
    rows = sum(len(m) for *_, m in groups) + len(groups)
    fig = _figure(9.5, 0.8 + 0.24 * rows)
    ax = fig.add_subplot()
    y = 0
    ticks, labels, heads = [], [], []
    for cell, notebook, gid, members in groups:
        heads.append((y, f"{gid} ({notebook})"
                      + (f": {100 * cell.pass_rate:.0f}% full marks" if cell and cell.pass_rate is not None else "")))
        y += 1
        for c in members:
            ax.barh(y, 100 * c.pass_rate, color=_rate_color(c.pass_rate), height=0.75)
            ax.text(100 * c.pass_rate + 1, y, f"{100 * c.pass_rate:.0f}% ({c.passed}/{c.n})", va="center",
                    fontsize=7)
            ticks.append(y)
            labels.append(_plain(c.title, 70))
            y += 1
    for pos, text in heads:
        ax.text(0, pos, _plain(text, 90), va="center", ha="left", fontsize=8, fontweight="bold")
        if pos:
            ax.axhline(pos - 0.5, color="#bbbbbb", linewidth=0.6)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_ylim(y - 0.5, -0.7)
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("% of students passing the check")
    ax.set_title("Checks by test cell (worst cell first, worst check first)", fontsize=10)
    return _png(fig)


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------
def e(value: Any) -> str:
    """Escape for HTML text and (double-quoted) attribute values."""
    return html.escape(str(value), quote=True)


def _pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.0f}%"


def _score(x: float | None) -> str:
    return "–" if x is None else f"{x:.4g}"


def _img(b64: str, alt: str, cls: str = "") -> str:
    return (f'<figure><img class="{e(cls)}" src="data:image/png;base64,{b64}" alt="{e(alt)}">'
            f"<figcaption>{e(alt)}</figcaption></figure>")


def _frac_class(score: float, maximum: float) -> str:
    if maximum <= 0:
        return "q-na"
    return f"q{min(4, int(4 * score / maximum + EPS))}"


CSS = """
:root { --ink:#1d2330; --muted:#5b6475; --line:#d9dde5; --bg:#f7f8fa; --warn:#b3261e; --accent:#2f5fb3; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1200px; padding: 1.5rem 2rem 4rem; background: #fff; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; } h2 { font-size: 1.25rem; margin: 2.2rem 0 .6rem;
     border-bottom: 2px solid var(--line); padding-bottom: .2rem; } h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
.summary { display: flex; flex-wrap: wrap; gap: .6rem; margin: 1rem 0; padding: 0; list-style: none; }
.summary li { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .45rem .8rem; }
.summary b { display: block; font-size: 1.25rem; }
nav a { margin-right: 1rem; color: var(--accent); }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--bg); } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fbfbfd; }
figure { margin: .5rem 0 1rem; } figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12px; }
.muted { color: var(--muted); } .warn { color: var(--warn); font-weight: 600; }
.hint, .msg { max-width: 48rem; } .msg { font-family: ui-monospace, monospace; font-size: 12px;
       white-space: pre-wrap; word-break: break-word; }
.kind { white-space: nowrap; } tr.tampering td { background: #fde8e6; }
td.q0 { background: #f8d7d3; } td.q1 { background: #fbe6cc; } td.q2 { background: #fdf3c7; }
td.q3 { background: #e3f1d2; } td.q4 { background: #cfe8c8; } td.missing { background: #e6e7ea; color: var(--muted); }
.flag { color: var(--warn); } .pen { color: var(--muted); font-size: 11px; }
details summary { cursor: pointer; color: var(--accent); }
"""


def render_html(data: ReportData, grades_csv: str | None = "grades.csv") -> str:
    """The report as one HTML document (inline CSS, embedded PNGs, no scripts)."""
    parts = [_head(data), _summary(data), _section_distribution(data), _section_tests(data),
             _section_misconceptions(data), _section_manual(data), _section_attention(data),
             _section_scores(data, grades_csv), "</body></html>\n"]
    return "\n".join(parts)


def _head(data: ReportData) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" "
            "content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
            f"<title>Grading report: {e(data.assignment)}</title><style>{CSS}</style></head><body>")


def _summary(data: ReportData) -> str:
    attention = {i.student for i in data.issues}
    manual_students = {s for s, _, _ in data.manual}
    tampering = {i.student for i in data.issues if i.kind == TAMPERING}
    mean = data.mean_total
    median = data.median_total
    items = [
        ("Students", f"{len(data.students)}", "with a submission"),
        ("Mean total", "–" if mean is None else f"{mean:.2f} / {data.max_total:g}",
         "" if mean is None or not data.max_total else f"{100 * mean / data.max_total:.0f}%"),
        ("Median total", "–" if median is None else f"{median:.2f} / {data.max_total:g}", ""),
        ("Manual grading", f"{len(data.manual)}", f"answers from {len(manual_students)} students"),
        ("Need attention", f"{len(attention)}", "students"),
    ]
    if tampering:
        items.append(("Suspected tampering", f"{len(tampering)}", "students"))
    lis = "".join(f"<li>{e(label)}<b>{e(value)}</b><span class=\"muted\">{e(note)}</span></li>"
                  for label, value, note in items)
    due = f" · due {data.duedate:%Y-%m-%d %H:%M}" if data.duedate else ""
    nav = "".join(f'<a href="#{a}">{t}</a>' for a, t in (
        ("distribution", "Distribution"), ("tests", "Tests &amp; checks"), ("misconceptions", "Misconceptions"),
        ("manual", "Manual grading"), ("attention", "Attention"), ("scores", "Score table")))
    return (f"<header><h1>Grading report: {e(data.assignment)}</h1>"
            f"<p class=\"muted\">Generated {e(f'{data.generated:%Y-%m-%d %H:%M %Z}')}{e(due)} · "
            f"{len(data.notebooks)} notebooks, {data.max_total:g} points · "
            "scores from the nbgrader gradebook, checks and misconceptions from the graders' "
            ".grading.json records</p>"
            f"<ul class=\"summary\">{lis}</ul><nav>{nav}</nav></header>")


def _section_distribution(data: ReportData) -> str:
    out = ['<section id="distribution"><h2>1. Score distribution</h2>']
    if not data.students:
        return out[0] + '<p class="muted">No submissions in the gradebook yet.</p></section>'
    alt = (f"Histogram of the total scores of {len(data.students)} students (max {data.max_total:g}): "
           f"mean {data.mean_total:.2f}, median {data.median_total:.2f}, "
           f"min {min(data.totals):g}, max {max(data.totals):g}.")
    out.append(_img(plot_total_histogram(data), alt, "wide"))
    per_nb = []
    for name in data.notebooks:
        scores = [s.scores[name] for s in data.students if name not in s.missing]
        mean = f"mean {statistics.fmean(scores):.2f}" if scores else "no submissions"
        per_nb.append(f"{name}: {mean} of {data.notebook_max[name]:g} (n={len(scores)})")
    out.append(_img(plot_notebook_histograms(data),
                    "Score histograms per notebook (students who submitted it): " + "; ".join(per_nb) + "."))
    out.append("</section>")
    return "\n".join(out)


def _section_tests(data: ReportData) -> str:
    out = ['<section id="tests"><h2>2. Test cells and checks</h2>',
           '<p class="muted">Pass rate of a test cell: share of the students who submitted its notebook '
           "with full marks on it (score from the gradebook). Pass rate of a check: share of the grading "
           "records in which the check passed.</p>"]
    cells = _sorted_cells(data)
    if not cells:
        return out[0] + '<p class="muted">No autograded test cells yet.</p></section>'
    worst = ", ".join(f"{c.grade_id} {_pct(c.pass_rate)}" for c in cells[:3])
    out.append(_img(plot_cell_pass_rates(data),
                    f"Bar chart of the share of students with full marks per test cell, sorted worst first "
                    f"({len(cells)} cells; worst: {worst})."))
    rows = []
    for c in cells:
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(c.statuses.items()) if k != "ok")
        rows.append(f"<tr><td>{e(c.notebook)}</td><td>{e(c.grade_id)}</td><td class=\"num\">{c.full}/{c.n}</td>"
                    f"<td class=\"num\">{_pct(c.pass_rate)}</td><td class=\"num\">{_pct(c.mean_fraction)}</td>"
                    f"<td class=\"num\">{c.max_score:g}</td><td>{e(statuses)}</td></tr>")
    out.append("<table><thead><tr><th>Notebook</th><th>Test cell</th><th class=\"num\">Full marks</th>"
               "<th class=\"num\">Pass rate</th><th class=\"num\">Mean % of points</th><th class=\"num\">Points</th>"
               "<th>Statuses other than ok (students)</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    groups = _grouped_checks(data)
    if groups:
        n_checks = sum(len(m) for *_, m in groups)
        worst_checks = sorted((c for *_, m in groups for c in m), key=lambda c: c.pass_rate)[:3]
        alt = (f"Horizontal bar chart of the pass rate of {n_checks} checks in {len(groups)} test cells, grouped "
               f"by cell, worst first (worst checks: "
               + "; ".join(f"{c.grade_id}/{c.name} {_pct(c.pass_rate)}" for c in worst_checks) + ").")
        out.append("<h3>Checks</h3>")
        out.append(_img(plot_check_pass_rates(data), alt))
        rows = []
        for cell, notebook, gid, members in groups:
            rows.append(f'<tr><th colspan="5">{e(gid)} <span class="muted">({e(notebook)}; '
                        f"full marks {_pct(cell.pass_rate if cell else None)})</span></th></tr>")
            for c in members:
                message = ""
                if c.messages:
                    text, count = c.messages.most_common(1)[0]
                    message = f'<span class="msg" lang="id">{e(text)}</span> <span class="muted">(×{count})</span>'
                rows.append(f"<tr><td>{e(c.name)}</td><td lang=\"id\">{e(c.title)}</td>"
                            f"<td class=\"num\">{c.passed}/{c.n}</td><td class=\"num\">{_pct(c.pass_rate)}</td>"
                            f"<td>{message}</td></tr>")
        out.append("<details><summary>Table of every check, with its most frequent failure message</summary>"
                   "<table><thead><tr><th>Check</th><th>Title</th><th class=\"num\">Passed</th>"
                   "<th class=\"num\">Pass rate</th><th>Most frequent failure message</th></tr></thead><tbody>"
                   + "".join(rows) + "</tbody></table></details>")
    out.append("</section>")
    return "\n".join(out)


def _students_list(students: list[str], limit: int = 30) -> str:
    shown = ", ".join(e(s) for s in students[:limit])
    more = len(students) - limit
    return shown + (f' <span class="muted">and {more} more</span>' if more > 0 else "")


def _section_misconceptions(data: ReportData) -> str:
    out = ['<section id="misconceptions"><h2>3. Most frequent misconceptions</h2>']
    if not data.misconceptions:
        out.append('<p class="muted">No catalogued misconception was diagnosed.</p></section>')
        return "\n".join(out)
    out.append('<p class="muted">Students whose wrong answer behaved like a documented wrong implementation '
               "(graders/misconceptions.py). Hints are shown to students as written.</p>")
    rows = []
    for m in data.misconceptions:
        hint = (f'<td class="hint" lang="id">{e(m.hint)}</td>' if m.hint is not None
                else '<td class="muted">(not in graders/misconceptions.py)</td>')
        rows.append(f'<tr data-misconception="{e(m.id)}"><td class="num">{m.count}</td><td>{e(m.function)}</td>'
                    f"<td><code>{e(m.id)}</code></td>{hint}<td>{_students_list(m.students)}</td></tr>")
    out.append("<table><thead><tr><th class=\"num\">Students</th><th>Function</th><th>Misconception</th>"
               "<th>Hint</th><th>Who</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></section>")
    return "\n".join(out)


def _section_manual(data: ReportData) -> str:
    out = ['<section id="manual"><h2>4. Manual grading and students needing attention</h2>',
           "<h3>Needs manual grading</h3>"]
    by_student: dict[str, list[tuple[str, str]]] = {}
    for student, notebook, gid in data.manual:
        by_student.setdefault(student, []).append((notebook, gid))
    if not by_student:
        out.append('<p class="muted">No grade needs a manual grade.</p>')
        return "\n".join(out)
    out.append(f"<p>{len(data.manual)} grades (written answers, or autograded cells marked for review) "
               f"from {len(by_student)} students need a manual grade in formgrader.</p>")
    rows = []
    for student in sorted(by_student):
        items = by_student[student]
        cells = "<br>".join(f"{e(nb)} · <code>{e(gid)}</code>" for nb, gid in items)
        rows.append(f'<tr data-student="{e(student)}" data-kind="manual"><td>{e(student)}</td><td>{cells}</td>'
                    f'<td class="num">{len(items)}</td></tr>')
    out.append("<table><thead><tr><th>Student</th><th>Cells</th><th class=\"num\">Count</th></tr></thead>"
               "<tbody>" + "".join(rows) + "</tbody></table>")
    return "\n".join(out)


WHOLE_ASSIGNMENT = '<span class="muted">(assignment)</span>'


def _section_attention(data: ReportData) -> str:
    out = ['<h3 id="attention">Students needing attention</h3>']
    issues = data.issues
    if not issues:
        out.append('<p class="muted">Nothing unusual: no time-outs, crashes, missing notebooks or notes.</p>'
                   "</section>")
        return "\n".join(out)
    kinds = Counter(i.kind for i in issues)
    students = {i.student for i in issues}
    out.append(f"<p>{len(students)} students: "
               + ", ".join(f"{e(ISSUE_TEXT.get(k, k))} ({n})" for k, n in sorted(kinds.items())) + ".</p>")
    rows = []
    for i in issues:
        cls = ' class="tampering"' if i.kind == TAMPERING else ""
        rows.append(f'<tr{cls} data-student="{e(i.student)}" data-notebook="{e(i.notebook)}" data-kind="{e(i.kind)}">'
                    f"<td>{e(i.student)}</td><td>{e(i.notebook) or WHOLE_ASSIGNMENT}</td>"
                    f"<td class=\"kind\">{e(ISSUE_TEXT.get(i.kind, i.kind))}</td>"
                    f"<td class=\"msg\">{e(i.detail)}</td></tr>")
    out.append("<table><thead><tr><th>Student</th><th>Notebook</th><th>Issue</th><th>Detail</th></tr></thead>"
               "<tbody>" + "".join(rows) + "</tbody></table></section>")
    return "\n".join(out)


def _section_scores(data: ReportData, grades_csv: str | None) -> str:
    out = ['<section id="scores"><h2>5. Scores by student and notebook</h2>']
    if not data.students:
        return out[0] + '<p class="muted">No submissions.</p></section>'
    link = f' Exported with nbgrader: <a href="{e(grades_csv)}">{e(grades_csv)}</a>.' if grades_csv else ""
    out.append('<p class="muted">Gradebook scores. <span class="flag">✎</span> needs manual grading, '
               f'<span class="flag">⚠</span> needs attention (see above), “missing”: notebook not submitted.{link}</p>')
    attention = {i.student for i in data.issues}
    penalties = any(s.penalty for s in data.students)
    head = "".join(f'<th class="num">{e(nb)}<br><span class="muted">/{data.notebook_max[nb]:g}</span></th>'
                   for nb in data.notebooks)
    rows = []
    for s in data.students:
        manual_nbs = {nb for nb, _ in s.manual}
        tds = []
        for nb in data.notebooks:
            if nb in s.missing:
                tds.append('<td class="num missing">missing</td>')
                continue
            mark = ' <span class="flag" title="needs manual grading">✎</span>' if nb in manual_nbs else ""
            tds.append(f'<td class="num {_frac_class(s.scores[nb], data.notebook_max[nb])}" '
                       f'data-notebook="{e(nb)}">{_score(s.scores[nb])}{mark}</td>')
        flag = ' <span class="flag" title="needs attention">⚠</span>' if s.student in attention else ""
        pen = f'<td class="num">{s.penalty:g}</td>' if penalties else ""
        rows.append(f'<tr data-student="{e(s.student)}"><td>{e(s.student)}{flag}</td>{"".join(tds)}{pen}'
                    f'<td class="num {_frac_class(s.total, data.max_total)}"><b>{_score(s.total)}</b></td></tr>')
    pen_head = '<th class="num">Late penalty</th>' if penalties else ""
    out.append(f"<table><thead><tr><th>Student</th>{head}{pen_head}"
               f'<th class="num">Total<br><span class="muted">/{data.max_total:g}</span></th></tr></thead>'
               "<tbody>" + "".join(rows) + "</tbody></table></section>")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------
def export_grades(course: Course, path: Path) -> Path:
    """``grades.csv`` for this assignment with nbgrader's own CSV exporter (as ``nbgrader export``)."""
    from .export import SafeCsvExportPlugin

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    plugin = SafeCsvExportPlugin(config=course.config(), to=str(tmp), assignment=[course.assignment], student=[])
    with _gradebook(course) as gb:
        plugin.export(gb)
    tmp.replace(path)
    return path


def write_report(course: Course, out_dir: Path | None = None, data: ReportData | None = None) -> Path:
    """Write ``report.html`` and ``grades.csv`` to ``out_dir`` (default ``reports/<assignment>/``).

    Returns the path of the HTML file.
    """
    out_dir = Path(out_dir) if out_dir is not None else course.root / "reports" / course.assignment
    out_dir.mkdir(parents=True, exist_ok=True)
    data = data if data is not None else collect(course)
    export_grades(course, out_dir / "grades.csv")
    target = out_dir / "report.html"
    tmp = out_dir / f".report.html.{os.getpid()}.tmp"
    tmp.write_text(render_html(data, "grades.csv"), encoding="utf-8")
    tmp.replace(target)
    return target


__all__ = ["CellStat", "CheckStat", "Issue", "MisconceptionStat", "ReportData", "StudentReport", "collect",
           "export_grades", "render_html", "write_report"]

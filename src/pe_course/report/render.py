"""Render the report: view data for the Jinja2 template (autoescaped), and write the files."""

from __future__ import annotations

import statistics
from collections import Counter
from functools import cache
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from ..course import Course
from ..record import atomic_write
from ..record.outcomes import english
from .collect import collect
from .data import EPS, TAMPERING, ReportData
from .plots import (
    clauses_by_cell,
    plot_cell_pass_rates,
    plot_clause_losses,
    plot_notebook_histograms,
    plot_total_histogram,
    sorted_cells,
)

SECTIONS = (
    ("distribution", "Distribution"),
    ("tests", "Test cells"),
    ("clauses", "Clauses"),
    ("misconceptions", "Misconceptions"),
    ("manual", "Manual grading"),
    ("attention", "Attention"),
    ("scores", "Score table"),
)


def pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.0f}%"


def score(x: float | None) -> str:
    return "–" if x is None else f"{x:.4g}"


def quartile(value: float, maximum: float) -> str:
    """CSS class colouring a score by the quarter of the maximum it reached."""
    if maximum <= 0:
        return "q-na"
    return f"q{min(4, int(4 * value / maximum + EPS))}"


def other_statuses(statuses: Counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()) if k != "ok")


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("pe_course.report", "templates"), autoescape=True, undefined=StrictUndefined
    )
    env.filters.update(
        pct=pct,
        score=score,
        quartile=quartile,
        other_statuses=other_statuses,
        issue_text=english,
    )
    return env


def _css() -> Markup:
    """The stylesheet, inlined: our own file, not data, so it is not escaped."""
    env = environment()
    assert env.loader is not None
    return Markup(env.loader.get_source(env, "report.css")[0])


def _summary(data: ReportData) -> list[tuple[str, str, str]]:
    mean, median = data.mean_total, data.median_total
    tampering = {i.student for i in data.issues if i.kind == TAMPERING}
    items = [
        ("Students", f"{len(data.students)}", "with a submission"),
        (
            "Mean total",
            "–" if mean is None else f"{mean:.2f} / {data.max_total:g}",
            "" if mean is None or not data.max_total else f"{100 * mean / data.max_total:.0f}%",
        ),
        ("Median total", "–" if median is None else f"{median:.2f} / {data.max_total:g}", ""),
        (
            "Manual grading",
            f"{len(data.manual)}",
            f"answers from {len({s for s, _, _ in data.manual})} students",
        ),
        ("Need attention", f"{len({i.student for i in data.issues})}", "students"),
    ]
    if tampering:
        items.append(("Suspected tampering", f"{len(tampering)}", "students"))
    return items


def _alt_texts(data: ReportData, cells, groups) -> tuple[dict, dict]:
    """The plots' alternative texts: what a reader who cannot see the image needs to know."""
    distribution, tests = {}, {}
    if data.students:
        distribution["total_alt"] = (
            f"Histogram of the total scores of {len(data.students)} students (max {data.max_total:g}): "
            f"mean {data.mean_total:.2f}, median {data.median_total:.2f}, "
            f"min {min(data.totals):g}, max {max(data.totals):g}."
        )
        per_nb = []
        for name in data.notebooks:
            scores = [s.scores[name] for s in data.students if name not in s.missing]
            mean = f"mean {statistics.fmean(scores):.2f}" if scores else "no submissions"
            per_nb.append(f"{name}: {mean} of {data.notebook_max[name]:g} (n={len(scores)})")
        distribution["notebooks_alt"] = (
            "Score histograms per notebook (students who submitted it): " + "; ".join(per_nb) + "."
        )
    if cells:
        worst = ", ".join(f"{c.grade_id} {pct(c.pass_rate)}" for c in cells[:3])
        tests["cells_alt"] = (
            f"Bar chart of the share of students with full marks per test cell, sorted worst first "
            f"({len(cells)} cells; worst: {worst})."
        )
    if groups:
        clauses = [c for _, m in groups for c in m]
        most_lost = sorted((c for c in clauses if c.lost), key=lambda c: -(c.lost_share or 0.0))[:3]
        lost = "; ".join(
            f"{c.grade_id} {c.clause} {pct(c.lost_share)} ({c.lost}/{c.submitted})" for c in most_lost
        )
        tests["clauses_alt"] = (
            f"Horizontal bar chart of the share of students who lost each of {len(clauses)} clauses in "
            f"{len(groups)} test cells (of the students who submitted the notebook), grouped by cell, "
            f"worst cell first, worst clause first ({f'most often lost: {lost}' if lost else 'no student lost a clause'})."
        )
    return distribution, tests


def render_html(data: ReportData, grades_csv: str | None = "grades.csv") -> str:
    """The report as one HTML document (inline CSS, embedded PNGs, no scripts)."""
    cells = sorted_cells(data)
    groups = clauses_by_cell(data) if cells else []
    plots: dict[str, str] = {}
    if data.students:
        plots.update(total=plot_total_histogram(data), notebooks=plot_notebook_histograms(data))
    if cells:
        plots["cells"] = plot_cell_pass_rates(data)
        if groups:
            plots["clauses"] = plot_clause_losses(data)
    distribution, tests = _alt_texts(data, cells, groups)
    manual: dict[str, list[tuple[str, str]]] = {}
    for student, notebook, gid in data.manual:
        manual.setdefault(student, []).append((notebook, gid))
    issues = data.issues
    kinds = Counter(i.kind for i in issues)
    env = environment()
    return (
        env.get_template("report.html.j2").render(
            data=data,
            css=_css(),
            summary=_summary(data),
            nav=SECTIONS,
            plots=plots,
            distribution=distribution,
            tests=tests,
            cells=cells,
            groups=groups,
            manual=sorted(manual.items()),
            issues=issues,
            tampering=TAMPERING,
            attention={
                "students": len({i.student for i in issues}),
                "kinds": [(english(k), n) for k, n in sorted(kinds.items())],
            },
            attention_students={i.student for i in issues},
            unisolated=sorted({i.student for i in issues if i.kind == "unisolated"}),
            penalties=any(s.penalty for s in data.students),
            grades_csv=grades_csv,
        )
        + "\n"
    )


def export_grades(course: Course, path: Path) -> Path:
    """``grades.csv`` for this assignment with nbgrader's own CSV exporter (as ``nbgrader export``)."""
    from ..lms.export import SafeCsvExportPlugin

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    plugin = SafeCsvExportPlugin(
        config=course.config(), to=str(tmp), assignment=[course.assignment], student=[]
    )
    with course.gradebook(must_exist=True) as gb:
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
    atomic_write(target, render_html(data, "grades.csv"))
    return target

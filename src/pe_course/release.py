"""Generate the release with nbgrader and check that it is safe to hand to students.

A release notebook must contain no solution code and no hidden test text, every graded function
must be a stub that raises ``NotImplementedError``, and no notebook may carry outputs.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import nbformat

from .course import Course
from .notebook import HIDDEN_MARKER, SOLUTION_BEGIN, SOLUTION_END, grade_id, is_test_cell, nbgrader_meta

VOLATILE_CELL_KEYS = ("id",)
RUBRIC_HEADING = (
    "Rubrik penilaian"  # how every rubric in a question cell begins (docs/notebook-conventions.md)
)


class ReleaseError(RuntimeError):
    pass


def generate_release(course: Course, dest_root: Path | None = None) -> Path:
    """Run nbgrader's generate_assignment; into ``dest_root/release`` when given (for comparisons)."""
    overrides = {}
    if dest_root is not None:
        overrides = {
            "CourseDirectory.release_directory": str(Path(dest_root) / "release"),
            "CourseDirectory.db_url": f"sqlite:///{Path(dest_root) / 'gradebook.db'}",
        }
    result = course.api(**overrides).generate_assignment(course.assignment, force=True)
    if not result["success"]:
        raise ReleaseError(
            f"nbgrader generate_assignment failed:\n{result.get('error') or result.get('log')}"
        )
    return (Path(dest_root) / "release" / course.assignment) if dest_root else course.release


def release_problems(release_dir: Path, source_dir: Path) -> list[str]:
    """Everything that makes a release unsafe or unusable for students (empty when fine)."""
    problems: list[str] = []
    sources = {p.name: nbformat.read(p, as_version=4) for p in sorted(Path(source_dir).glob("*.ipynb"))}
    released = {p.name: nbformat.read(p, as_version=4) for p in sorted(Path(release_dir).glob("*.ipynb"))}
    if set(sources) != set(released):
        problems.append(
            f"release notebooks {sorted(released)} differ from source notebooks {sorted(sources)}"
        )
    for name, nb in sources.items():
        hidden = [grade_id(c) or str(i) for i, c in enumerate(nb.cells) if HIDDEN_MARKER in c.source]
        if hidden:  # graders/ decides the scores: a hidden region here would look like grading that is not
            problems.append(
                f"source {name}: '### BEGIN HIDDEN TESTS' in {', '.join(hidden)}; put hidden checks "
                "in graders/ instead"
            )
    for name, nb in released.items():
        solution_lines = _solution_lines(sources.get(name))
        for index, cell in enumerate(nb.cells):
            where = f"{name} cell {index} ({grade_id(cell) or cell.cell_type})"
            src = cell.source
            if (
                "BEGIN SOLUTION" in src
                or "END SOLUTION" in src
                or HIDDEN_MARKER in src
                or "END HIDDEN TESTS" in src
            ):
                problems.append(f"{where}: contains solution or hidden-test markers")
            if "MARK SCHEME" in src or RUBRIC_HEADING in src:
                problems.append(f"{where}: contains the graders' rubric (mark scheme)")
            if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count")):
                problems.append(f"{where}: has outputs")
            meta = nbgrader_meta(cell)
            if meta.get("solution") and cell.cell_type == "code" and "raise NotImplementedError(" not in src:
                problems.append(f"{where}: solution cell without a NotImplementedError stub")
            leaked = [line for line in src.splitlines() if line.strip() and line.strip() in solution_lines]
            if leaked:
                problems.append(f"{where}: solution text leaked: {leaked[0].strip()!r}")
            if is_test_cell(cell) and not meta.get("grade"):
                problems.append(f"{where}: test cell is not graded")
    return problems


def _solution_lines(nb: Any) -> set[str]:
    """Lines that appear only inside solution regions of the source notebook."""
    if nb is None:
        return set()
    inside: set[str] = set()
    elsewhere: set[str] = set()
    for cell in nb.cells:
        # nbgrader replaces a whole solution cell that has no markers (e.g. a written answer)
        active = bool(nbgrader_meta(cell).get("solution")) and SOLUTION_BEGIN not in cell.source
        for line in cell.source.splitlines():
            text = line.strip()
            if text == SOLUTION_BEGIN:
                active = True
            elif text == SOLUTION_END:
                active = False
            elif text and not text.startswith("#"):
                (inside if active else elsewhere).add(text)
    return inside - elsewhere - {"pass", "return out", "return result"}


def normalized(nb: Any) -> dict:
    """A notebook as data without volatile fields (cell ids), for golden comparisons."""
    data = nbformat.from_dict(nb) if not isinstance(nb, dict) else nb
    data = nbformat.from_dict(data)
    for cell in data.cells:
        for key in VOLATILE_CELL_KEYS:
            cell.pop(key, None)
    return data


def release_diff(course: Course) -> list[str]:
    """Names of committed release notebooks that differ from a fresh generate_assignment."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate_release(course, Path(tmp))
        names = sorted(
            {p.name for p in fresh.glob("*.ipynb")} | {p.name for p in course.release.glob("*.ipynb")}
        )
        differ = []
        for name in names:
            a, b = fresh / name, course.release / name
            if not (a.exists() and b.exists()) or normalized(nbformat.read(a, 4)) != normalized(
                nbformat.read(b, 4)
            ):
                differ.append(name)
        return differ


def refresh_release(course: Course) -> Path:
    """Check a fresh release in a scratch directory, then generate ``release/`` and the gradebook entry.

    The one command that refreshes the committed (golden) copy: ``pe-course release``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        problems = release_problems(generate_release(course, Path(tmp)), course.source)
    if problems:
        raise ReleaseError("refusing to release:\n- " + "\n- ".join(problems))
    if course.release.exists():
        shutil.rmtree(course.release)
    return generate_release(course)

"""The graders' self-validation: what ``pe-course build`` requires before it releases.

- the reference solutions (source notebooks, markers stripped) score 100% through the sandbox;
- the released stubs score 0 on every test cell without crashing anything;
- every catalogued misconception (carried-over ones included) loses points on its cell and is
  diagnosed with exactly its id;
- every alternative correct implementation (``graders/alternatives.py``) scores full marks with no
  diagnosis, and every misconception inside otherwise careful code there is diagnosed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .course import Course
from .diagnosis import InProcessCaller
from .notebook import load_reference, strip_solution_markers
from .release import DataFileError, data_files
from .sandbox import Sandbox
from .score import _grade_function, grade_notebook, load_suite


@dataclass
class SelfCheck:
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (what, subject, outcome)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def reference_submission(source_notebook: Path):
    """A source notebook as a student would submit it if they wrote the reference solution."""
    nb = nbformat.read(source_notebook, as_version=4)
    for cell in nb.cells:
        cell.source = strip_solution_markers(cell.source)
    return nb


def run_selfcheck(
    course: Course, sandbox: Sandbox | None = None, release_dir: Path | None = None
) -> SelfCheck:
    sandbox = sandbox or Sandbox(unisolated=True)  # only this project's own code runs here
    suite = load_suite(course.graders)
    reference = load_reference(course.source)
    report = SelfCheck()
    release_dir = release_dir or course.release
    try:
        files = data_files(release_dir)  # beside the notebooks for the student, so for the worker too
    except DataFileError as exc:
        report.problems.append(str(exc))
        files = {}
    for path in sorted(course.source.glob("*.ipynb")):
        nb_id = path.stem
        if nb_id not in suite.notebooks:
            report.problems.append(f"{nb_id}: no graders (graders/checks_*.py with NOTEBOOK = {nb_id!r})")
            continue
        ref = grade_notebook(reference_submission(path), nb_id, suite, reference, sandbox, files=files)
        outcome = f"{ref.score:g}/{ref.max_score:g}"
        report.rows.append(("reference", nb_id, outcome))
        if ref.score != ref.max_score or len(ref.cells) != len(suite.notebooks[nb_id]):
            failed = [
                f"{c.grade_id}:{k.name}: {k.message}" for c in ref.cells for k in c.checks if not k.passed
            ]
            report.problems.append(f"reference {nb_id} scores {outcome}: " + "; ".join(failed[:5]))
        stub_path = release_dir / path.name
        if stub_path.exists():
            stub = grade_notebook(
                nbformat.read(stub_path, as_version=4), nb_id, suite, reference, sandbox, files=files
            )
            report.rows.append(("released stubs", nb_id, f"{stub.score:g}/{stub.max_score:g}"))
            if stub.score != 0:
                report.problems.append(f"released stubs of {nb_id} score {stub.score:g}, expected 0")
        else:
            report.problems.append(f"no released notebook {stub_path}")
    wrong = [
        (f, m.implementation, m.id, "misconception" + (f" (from {m.carried_from})" if m.carried_from else ""))
        for f, entries in sorted(suite.misconceptions.items())
        for m in entries
    ]
    try:
        students = suite.module("alternatives")
    except ModuleNotFoundError:
        students = None
    wrong += [
        (f, impl, mid, "careful code + misconception") for f, impl, mid in getattr(students, "COMPOUND", [])
    ]
    for function, implementation, mid, what in wrong:
        cell = _grade_in_process(suite, reference, function, implementation)
        ids = [d["id"] for d in cell.misconceptions]
        report.rows.append(
            (
                what,
                f"{function}/{mid}",
                f"{cell.score:g}/{cell.max_score:g}, diagnosed: {', '.join(ids) or '-'}",
            )
        )
        if cell.score >= cell.max_score:
            report.problems.append(f"{what} {function}/{mid} scores full marks")
        if ids != [mid]:
            report.problems.append(f"{what} {function}/{mid} is diagnosed as {ids or 'nothing'}")
    for function, implementations in sorted(getattr(students, "ALTERNATIVES", {}).items()):
        for implementation in implementations:
            cell = _grade_in_process(suite, reference, function, implementation)
            ids = [d["id"] for d in cell.misconceptions]
            report.rows.append(
                (
                    "alternative correct",
                    f"{function}/{implementation.__name__}",
                    f"{cell.score:g}/{cell.max_score:g}",
                )
            )
            if cell.score != cell.max_score or ids:
                report.problems.append(
                    f"correct {function}/{implementation.__name__} scores "
                    f"{cell.score:g}/{cell.max_score:g}, diagnosed {ids or 'nothing'}"
                )
    return report


def _grade_in_process(suite, reference, function, implementation):
    caller = InProcessCaller({**reference, function: implementation})
    return _grade_function(function, suite, reference, caller, deadline=float("inf"))

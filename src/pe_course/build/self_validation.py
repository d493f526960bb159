"""The graders' self-validation: what ``pe-course build`` requires before it releases.

- the reference solutions (source notebooks, markers stripped) score 100% through the sandbox;
- the released stubs score 0 on every test cell without crashing anything;
- every catalogued misconception (carried-over ones included) is charged exactly one clause of its
  function, is diagnosed with exactly its id, and the public check fails on the same clause;
- every alternative correct implementation (``@alternative`` in the notebook's folder of
  ``graders/<assignment>/``) scores full marks with no diagnosis, and every misconception inside
  otherwise careful code (``@careful``) is diagnosed;
- every flawed student (``@flawed``) loses exactly the clauses it declares, by the graders and by the
  public check;
- a submission that hard-codes the public cases' results earns nothing;
- a degenerate student (``None``, a constant, zeros or noise of the right shape, its own argument,
  raising for everything, validating and then returning zeros or raising) earns nothing, by the
  graders and by the public check (:mod:`pe_course.build.degenerate`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from ..course import Course
from ..course.datafiles import DataFileError, data_files
from ..course.notebooks import load_reference, strip_solution_markers
from ..engine import grade_function, grade_notebook
from ..engine.diagnosis import InProcessCaller
from ..engine.discovery import load_suite
from ..public_checks import close_enough, from_data, preview_points, run_public
from ..sandbox import Sandbox
from .degenerate import degenerate_students
from .public_files import public_files


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


def released_stubs(course: Course, scratch: Path) -> Path:
    """Where the stubs to self-validate are: ``release/<assignment>/`` when it has every notebook of
    ``source/``, else a fresh generation in ``scratch`` (a new assignment or notebook has none yet)."""
    from .release import generate_release

    if all((course.release / f"{name}.ipynb").is_file() for name in course.notebooks):
        return course.release
    return generate_release(course, scratch)


def run_selfcheck(
    course: Course,
    sandbox: Sandbox | None = None,
    release_dir: Path | None = None,
    students: bool = True,
) -> SelfCheck:
    """The self-validation of the module docstring; with ``students=False`` only its first two parts
    (the reference full marks, the released stubs 0: what ``pe-course demo`` checks before its round)."""
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
            report.problems.append(f"{nb_id}: no graders (no @check in {suite.path}/{nb_id}/)")
            continue
        ref = grade_notebook(reference_submission(path), nb_id, suite, reference, sandbox, files=files)
        outcome = f"{ref.score:g}/{ref.max_score:g}"
        report.rows.append(("reference", nb_id, outcome))
        if ref.score != ref.max_score or len(ref.cells) != len(suite.notebooks[nb_id]):
            failed = [
                f"{c.grade_id}:{k.clause}: {k.message}" for c in ref.cells for k in c.clauses if not k.passed
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
    if not students:
        return report
    wrong = [
        (f, m.implementation, m.id, "misconception" + (f" (from {m.carried_from})" if m.carried_from else ""))
        for f, entries in sorted(suite.misconceptions.items())
        for m in entries
    ]
    wrong += [(f, impl, mid, "careful code + misconception") for f, impl, mid in suite.careful]
    with tempfile.TemporaryDirectory(prefix="pe-public-") as tmp:
        public = _write_public_checks(Path(tmp), course, suite, reference)
        _students(report, suite, reference, wrong, public)
    return report


def _students(report: SelfCheck, suite: Any, reference: Any, wrong: list, public: Path) -> None:
    """Misconceptions, alternatives, flawed students and the hard-coder, graded in this process."""
    for function, implementation, mid, what in wrong:
        cell = _grade_in_process(suite, reference, function, implementation)
        ids = [d["id"] for d in cell.misconceptions]
        lost = _lost(cell)
        seen = _lost_publicly(function, implementation, public)
        report.rows.append(
            (
                what,
                f"{function}/{mid}",
                f"{cell.score:g}/{cell.max_score:g}, lost {', '.join(sorted(lost)) or '-'}, "
                f"public check {', '.join(sorted(seen)) or '-'}, diagnosed: {', '.join(ids) or '-'}",
            )
        )
        if len(lost) != 1:
            report.problems.append(
                f"{what} {function}/{mid} is charged {sorted(lost) or 'nothing'}, not one clause"
            )
        if seen != lost:
            report.problems.append(
                f"{what} {function}/{mid}: the public check finds {sorted(seen)}, the graders {sorted(lost)}"
            )
        if ids != [mid]:
            report.problems.append(f"{what} {function}/{mid} is diagnosed as {ids or 'nothing'}")
    for function, implementations in sorted(suite.alternatives.items()):
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
            if cell.score != cell.max_score or ids or _lost_publicly(function, implementation, public):
                report.problems.append(
                    f"correct {function}/{implementation.__name__} scores "
                    f"{cell.score:g}/{cell.max_score:g}, diagnosed {ids or 'nothing'}"
                )
    for function, implementation, clauses in suite.flawed:
        cell = _grade_in_process(suite, reference, function, implementation)
        lost, seen = _lost(cell), _lost_publicly(function, implementation, public)
        report.rows.append(
            (
                "flawed student",
                f"{function}/{implementation.__name__}",
                f"{cell.score:g}/{cell.max_score:g}, lost {', '.join(sorted(lost))}",
            )
        )
        if lost != set(clauses) or seen != set(clauses):
            report.problems.append(
                f"flawed {function}/{implementation.__name__} should lose {sorted(clauses)}: "
                f"the graders charge {sorted(lost)}, the public check {sorted(seen)}"
            )
    for function in sorted(suite.checks):
        for name, implementation in degenerate_students(reference[function]).items():
            cell = _grade_in_process(suite, reference, function, implementation)
            verdicts, _, _ = run_public(function, implementation, public)
            earned = sum(preview_points(v) for v in verdicts)
            report.rows.append(
                (
                    "degenerate student",
                    f"{function}/{name}",
                    f"{cell.score:g}/{cell.max_score:g}, public {earned:g}",
                )
            )
            if cell.score > 0 or earned > 0:
                kept = [c.clause for c in cell.clauses if c.passed] or [
                    v.clause.id for v in verdicts if v.passed
                ]
                report.problems.append(
                    f"degenerate {function}/{name} earns {cell.score:g} (public check {earned:g}): "
                    f"{', '.join(kept)} kept without evidence"
                )
        cell = _grade_in_process(suite, reference, function, hard_coder(function, public))
        report.rows.append(("hard-coded public cases", function, f"{cell.score:g}/{cell.max_score:g}"))
        if cell.score > 0:
            report.problems.append(f"hard-coding the public cases of {function} earns {cell.score:g}")


def hard_coder(fn: str, public: Path) -> Callable[..., Any]:
    """A submission that returns the public cases' results (read from the shipped JSON) and knows
    nothing else: the graders must give it nothing."""
    table = []
    for path in sorted(public.glob("*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))["functions"].get(fn)
        for case in spec["cases"] if spec else []:
            kwargs = {k: from_data(v) for k, v in case.get("kwargs", {}).items()}
            table.append(([from_data(a) for a in case["args"]], kwargs, case["expected"]))

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, (bool, int, float)) or isinstance(b, (bool, int, float)):
            return type(a) is type(b) and a == b
        return type(a) is type(b) and close_enough(a, b, rtol=0, atol=0)

    def implementation(*args: Any, **kwargs: Any) -> Any:
        for case_args, case_kwargs, expected in table:
            if (
                len(args) == len(case_args)
                and set(kwargs) == set(case_kwargs)
                and all(same(a, b) for a, b in zip(args, case_args, strict=True))
                and all(same(kwargs[k], case_kwargs[k]) for k in kwargs)
            ):
                if "raises" in expected:
                    raise ValueError("dihafalkan")
                return from_data(expected["value"])
        raise NotImplementedError()

    return implementation


def _write_public_checks(folder: Path, course: Course, suite: Any, reference: Any) -> Path:
    """The public checks as this version of the graders makes them, written into ``folder``."""
    notebooks = [p.stem for p in sorted(course.source.glob("*.ipynb"))]
    for name, data in public_files(suite, reference, notebooks).items():
        (folder / name).write_bytes(data)
    return folder


def _lost(cell) -> set[str]:
    return {c.clause for c in cell.clauses if not c.passed}


def _lost_publicly(function: str, implementation: Callable[..., Any], public: Path) -> set[str]:
    verdicts, _, _ = run_public(function, implementation, public)
    return {v.clause.id for v in verdicts if not v.passed}


def _grade_in_process(suite, reference, function, implementation):
    caller = InProcessCaller({**reference, function: implementation})
    return grade_function(function, suite, reference, caller, deadline=float("inf"))

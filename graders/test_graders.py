"""One pytest test per grader check, for the reference solutions or ``--submission`` notebooks."""

from __future__ import annotations

import nbformat
import pytest

from pe_course.build.self_validation import reference_submission
from pe_course.course.datafiles import data_files
from pe_course.course.notebooks import load_reference
from pe_course.engine import grade_notebook
from pe_course.engine.discovery import load_suite
from pe_course.record import GradingRecord
from pe_course.sandbox import Sandbox

from .conftest import submission_notebooks, ungrouped, unisolated

pytestmark = pytest.mark.slow  # every check runs the graders against a sandboxed worker

_RESULTS: dict[tuple[str, str, str], GradingRecord] = {}


def pytest_generate_tests(metafunc):
    if "check_id" not in metafunc.fixturenames:
        return
    found = submission_notebooks(metafunc.config)
    several = len({course.assignment for course, _, _ in found}) > 1
    params = []
    for course, notebook, path in found:
        suite = load_suite(course.graders)  # the assignment's own (c.ScoreWithGraders.graders_dir)
        where = f"{course.assignment}/{notebook}" if several else notebook
        for fn in suite.functions_for(notebook) or suite.notebooks.get(notebook, []):
            for chk in suite.checks[fn]:
                params.append(
                    pytest.param(
                        course,
                        notebook,
                        str(path or ""),
                        chk.cell,
                        chk.name,
                        id=f"{where}::{chk.cell}::{chk.name}",
                    )
                )
    metafunc.parametrize(("course", "notebook", "path", "cell_id", "check_id"), params)


def _graded(course, notebook: str, path: str, config) -> GradingRecord:
    key = (course.assignment, notebook, path)
    if key not in _RESULTS:
        source = course.source
        nb = nbformat.read(path, as_version=4) if path else reference_submission(source / f"{notebook}.ipynb")
        no_bwrap = config.getoption("--no-bwrap")
        sandbox = (
            Sandbox(use_bwrap=False)
            if no_bwrap
            else Sandbox(unisolated=unisolated(config), ungrouped=ungrouped(config))
        )
        files = data_files(source)  # the data beside the notebooks (pe_tables.npz), as in a real round
        _RESULTS[key] = grade_notebook(
            nb, notebook, load_suite(course.graders), load_reference(source), sandbox, files=files
        )
    return _RESULTS[key]


def test_check(request, course, notebook, path, cell_id, check_id):
    result = _graded(course, notebook, path, request.config)
    cell = result.cell(cell_id)
    assert cell is not None, f"{cell_id} was not graded"
    outcome = next(c for c in cell.checks if c.name == check_id)
    hints = "".join(f"\n  miskonsepsi {m['id']}: {m['hint']}" for m in cell.misconceptions)
    assert outcome.passed, f"{outcome.title}: {outcome.message}{hints}"

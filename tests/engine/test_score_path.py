"""Where a score is decided can be found in a minute (issue 33): grading a real notebook, every call
stack from ``pe_course.engine.grade_notebook`` (what the autograde step ``ScoreWithGraders`` calls) to
``pe_course.engine.grade.award``, the one function that gives a clause its points, is at most
:data:`MAX_CALLS` calls long, and every function on it lives in ``src/pe_course/engine/``."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType

import pytest
from conftest import REPO, with_code

import pe_course.engine
from pe_course.build.self_validation import reference_submission
from pe_course.course.notebooks import load_reference
from pe_course.engine import award, grade_notebook
from pe_course.public_checks import Clause, ClauseVerdict, Failure, preview_points
from pe_course.sandbox import Sandbox

MAX_CALLS = 8  # from grade_notebook's first call down to award's own frame
ENGINE = Path(pe_course.engine.__file__).resolve().parent
TOY = REPO / "tests" / "fixtures" / "course"
UNSCALED_SCORES = """
def attention_scores(q, k):
    q = np.asarray(q, dtype=float)
    k = np.asarray(k, dtype=float)
    return q @ k.T  # forgets / sqrt(d)
"""


def paths_to_award(run) -> list[list[FrameType]]:
    """Run ``run()`` under a profiler; for every call of ``award``, the frames from ``grade_notebook``
    down to it (the outermost first)."""
    found: list[list[FrameType]] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or frame.f_code is not award.__code__:
            return
        path, f = [], frame
        while f is not None and f.f_code is not grade_notebook.__code__:
            path.append(f)
            f = f.f_back
        found.append([f, *reversed(path)] if f is not None else list(reversed(path)))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return found


def where(frame: FrameType) -> str:
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_qualname}"


@pytest.fixture(scope="module")
def toy_paths():
    from pe_course.engine.discovery import load_suite

    suite = load_suite(TOY / "graders" / "toy-attention")
    reference = load_reference(TOY / "source" / "toy-attention")
    nb = with_code(
        reference_submission(TOY / "source" / "toy-attention" / "01_attention.ipynb"),
        "attention_scores",
        UNSCALED_SCORES,
    )
    records = []
    paths = paths_to_award(
        lambda: records.append(grade_notebook(nb, "01_attention", suite, reference, Sandbox()))
    )
    return paths, records[0]


def test_the_points_are_given_at_most_eight_calls_below_grade_notebook(toy_paths):
    paths, record = toy_paths
    clauses = [c for cell in record.cells for c in cell.clauses]
    assert len(paths) == len(clauses) > 0, "award gives every clause of every graded cell its points"
    assert any(not c.passed and c.points == 0 for c in clauses), "a lost point was traced too"
    for path in paths:
        assert path[0].f_code is grade_notebook.__code__, "award was reached from grade_notebook"
        calls = len(path) - 1
        assert calls <= MAX_CALLS, f"{calls} calls: " + " -> ".join(map(where, path))


def test_every_function_on_the_path_lives_in_the_engine(toy_paths):
    paths, _ = toy_paths
    outside = {
        where(f) + f" ({f.f_code.co_filename})"
        for path in paths
        for f in path
        if ENGINE not in Path(f.f_code.co_filename).resolve().parents
    }
    assert not outside, f"a score is decided in engine/ alone: {sorted(outside)}"


@pytest.mark.parametrize("failure", [None, Failure("K1", "salah")])
def test_the_public_check_previews_the_points_the_engine_awards(failure):
    verdict = ClauseVerdict(Clause("K1", "teks", 0.5), failure)
    assert award(verdict).points == preview_points(verdict) == (0.0 if failure else 0.5)

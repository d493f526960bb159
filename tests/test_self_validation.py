"""The graders validate themselves: reference full marks, stubs zero, misconceptions caught and
diagnosed, genuinely different correct implementations full marks (in-process, and through the
sandbox for whole notebooks)."""

from __future__ import annotations

import inspect

import pytest
from conftest import FUNCTIONS, REPO, reference_nb

from pe_course.diagnosis import InProcessCaller
from pe_course.sandbox import Sandbox
from pe_course.score import _grade_function, grade_notebook, load_suite
from pe_course.selfcheck import run_selfcheck

CATALOGUE_IDS = {
    "embed": {"pos-indexed-by-ids", "concat-not-add", "missing-position", "no-block-size-check"},
    "one_hot": {"one-hot-transposed"},
    "embed_backward": {"add-at-missing", "pos-indexed-by-ids"},
    "frequencies": {"freq-per-column", "inverted-frequency"},
    "positional_encoding": {
        "sin-cos-swapped",
        "freq-per-column",
        "halves-not-interleaved",
        "inverted-frequency",
    },
    "rotation_matrix": {"rotation-transposed"},
    "apply_rope": {"rope-rotate-half", "rope-wrong-direction", "freq-per-column"},
    # carried over from the function they build on (graders declare it with @builds_on)
    "shift_encoding": {"rotation-transposed"},
    "rope_scores": {"rope-rotate-half", "rope-wrong-direction", "freq-per-column"},
    "position_similarity": {"dot-not-cosine"},
    "offset_similarity": {"sin-not-cos"},
    "self_attention": {"no-sqrt-scaling", "softmax-wrong-axis", "unstable-softmax"},
}


def grade(fn, suite, reference, implementation):
    caller = InProcessCaller({**reference, fn: implementation})
    return _grade_function(fn, suite, reference, caller, deadline=float("inf"))


def test_every_graded_function_has_checks_and_the_catalogue_is_complete(suite):
    assert sorted(suite.checks) == sorted(FUNCTIONS)
    assert {fn: {m.id for m in ms} for fn, ms in suite.misconceptions.items()} == CATALOGUE_IDS
    for entries in suite.misconceptions.values():
        for m in entries:
            assert m.description and m.hint, f"{m.id} needs a docstring and a hint"


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_reference_scores_full_marks(fn, suite, reference):
    cell = grade(fn, suite, reference, reference[fn])
    assert cell.score == cell.max_score, [c.message for c in cell.checks if not c.passed]
    assert cell.status == "ok" and cell.misconceptions == []


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_stub_scores_zero(fn, suite, reference):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    cell = grade(fn, suite, reference, stub)
    assert cell.score == 0 and cell.status == "error"
    assert all("belum diimplementasikan" in c.message for c in cell.checks)


SUITE = load_suite(REPO / "graders")
ALTERNATIVES = SUITE.module("alternatives").ALTERNATIVES
COMPOUND = SUITE.module("alternatives").COMPOUND
CATALOGUE = [(fn, m.id, i) for fn, ms in sorted(SUITE.misconceptions.items()) for i, m in enumerate(ms)]


@pytest.mark.parametrize(
    ("fn", "mid", "index"), CATALOGUE, ids=[f"{fn}-{mid}-{i}" for fn, mid, i in CATALOGUE]
)
def test_misconception_loses_points_and_is_diagnosed(fn, mid, index, suite, reference):
    m = suite.misconceptions[fn][index]
    cell = grade(fn, suite, reference, m.implementation)
    assert cell.score < cell.max_score
    assert [d["id"] for d in cell.misconceptions] == [mid], (
        "diagnosed exactly the misconception, nothing else"
    )
    failed = [c for c in cell.checks if not c.passed]
    assert failed and all(c.message and c.input and c.clause_text for c in failed), (
        "every lost point names the failing input and the clause"
    )


@pytest.mark.parametrize(
    ("fn", "implementation"),
    [(fn, impl) for fn, impls in ALTERNATIVES.items() for impl in impls],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_alternative_correct_implementation_scores_full_marks(fn, implementation, suite, reference):
    assert len(ALTERNATIVES[fn]) >= 2
    cell = grade(fn, suite, reference, implementation)
    assert cell.score == cell.max_score, [f"{c.name}: {c.message}" for c in cell.checks if not c.passed]
    assert cell.misconceptions == []


@pytest.mark.parametrize(("fn", "implementation", "mid"), COMPOUND, ids=lambda v: getattr(v, "__name__", v))
def test_misconception_in_otherwise_careful_code_is_diagnosed(fn, implementation, mid, suite, reference):
    cell = grade(fn, suite, reference, implementation)
    assert cell.score < cell.max_score
    assert [d["id"] for d in cell.misconceptions] == [mid]


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["01_embedding", "03_rotation", "04_similarity"])
def test_alternatives_through_the_sandbox(notebook, suite, reference):
    """Each notebook's functions replaced by an alternative (pasted at the end) — full marks."""
    import nbformat

    alternatives = suite.module("alternatives")

    nb = reference_nb(notebook)
    code = inspect.getsource(alternatives).split("ALTERNATIVES = {")[0]
    code += "\n".join(f"{fn} = {ALTERNATIVES[fn][-1].__name__}" for fn in suite.notebooks[notebook])
    nb.cells.append(nbformat.v4.new_code_cell(code))
    result = grade_notebook(nb, notebook, suite, reference, Sandbox())
    assert result.score == result.max_score, [
        (c.grade_id, k.name, k.message) for c in result.cells for k in c.checks if not k.passed
    ]


@pytest.mark.slow
def test_build_selfcheck_passes(repo_course):
    report = run_selfcheck(repo_course, Sandbox())
    assert report.ok, report.problems
    assert {row[1] for row in report.rows if row[0] == "reference"} == {
        p.stem for p in (REPO / "source" / "positional-encoding").glob("*.ipynb")
    }

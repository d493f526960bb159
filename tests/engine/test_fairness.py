"""Fair to every honest student: one mistake costs points in one cell, with its input shown, and
misconceptions are recognised inside otherwise careful code.

In-process tests use the graders' trusted caller; the ``sandbox`` ones grade real notebooks with
student code in the real sandbox (the worker's stand-in for an upstream function included), and
one goes through plain ``nbgrader autograde``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import reference_nb, requires_bwrap, with_code

from pe_course.engine import grade_function, grade_notebook
from pe_course.engine.diagnosis import InProcessCaller
from pe_course.record.feedback import cell_markdown
from pe_course.sandbox import Sandbox


def grade(fn, suite, reference, implementation, **others):
    caller = InProcessCaller({**reference, **others, fn: implementation})
    return grade_function(fn, suite, reference, caller, deadline=float("inf"))


def lost(cell):
    return {c.clause for c in cell.clauses if not c.passed}


# -- the common student code the issue measured ---------------------------------------------------
def one_hot_np_array(ids, vocab_size):
    ids = np.array(ids)  # [] becomes a float array: fine for every T >= 1
    out = np.zeros((len(ids), vocab_size))
    out[np.arange(len(ids)), ids] = 1.0
    return out


def backward_np_array(ids, grad_h, vocab_size, block_size):
    ids = np.array(ids)
    grad_h = np.asarray(grad_h, dtype=float)
    t, d = grad_h.shape
    grad_tok = np.zeros((vocab_size, d))
    np.add.at(grad_tok, ids, grad_h)
    grad_pos = np.zeros((block_size, d))
    grad_pos[:t] = grad_h
    return grad_tok, grad_pos


@pytest.mark.parametrize(
    ("fn", "implementation", "clause"),
    [("one_hot", one_hot_np_array, "K3"), ("embed_backward", backward_np_array, "K4")],
)
def test_empty_ids_mistake_costs_only_the_stated_empty_ids_clause(
    fn, implementation, clause, suite, reference
):
    cell = grade(fn, suite, reference, implementation)
    assert lost(cell) == {clause}
    failed = next(c for c in cell.clauses if not c.passed)
    assert failed.input.startswith(f"{fn}([]") and failed.input in failed.message, failed.input
    assert failed.text == reference.contracts[fn][clause].text and "kosong" in failed.text
    assert cell.score == cell.max_score - reference.contracts[fn][clause].points
    assert f"**{clause}** (0/" in cell_markdown(cell)


def test_apply_rope_following_the_hints_scores_full_marks(suite, reference):
    """The notebook's hints, followed literally (positions converted with np.asarray), give full marks."""
    rope_as_hints_say = suite.module("03_rotation.alternatives").rope_as_hints_say
    assert rope_as_hints_say in suite.alternatives["apply_rope"]
    cell = grade("apply_rope", suite, reference, rope_as_hints_say)
    assert cell.score == cell.max_score, [c.message for c in cell.clauses if not c.passed]


# Misconceptions inside otherwise careful code: @careful in graders/<assignment>/<notebook>/flawed.py, checked by
# tests/build/test_self_validation.py and by `pe-course build`.


def test_a_check_on_generated_inputs_shows_a_small_failing_input_and_is_repeatable(suite, reference):
    def embed_off_by_one(ids, tok_table, pos_table):  # wrong only when T >= 2
        ids = np.asarray(ids, dtype=int)
        if len(ids) > pos_table.shape[0]:
            raise ValueError("T melebihi block_size")
        return tok_table[ids] + pos_table[::-1][-len(ids) :] if len(ids) else tok_table[ids]

    first = grade("embed", suite, reference, embed_off_by_one)
    again = grade("embed", suite, reference, embed_off_by_one)
    assert not next(c for c in first.checks if c.name == "acak").passed
    assert lost(first) == {"K1"}
    k1 = first.clauses[0]
    assert k1.input.startswith("embed(") and k1.expected and k1.obtained
    assert len(k1.input) < 60, f"the shrunk input should be small: {k1.input}"
    assert [c.message for c in first.clauses] == [c.message for c in again.clauses]


# -- one mistake, one cell ------------------------------------------------------------------------
def test_dependent_is_graded_with_a_correct_upstream_in_process(suite, reference):
    """rope_scores = apply_rope(q) @ apply_rope(k).T written by the student, whose apply_rope is wrong."""
    namespace = {"np": np}
    exec(  # noqa: S102 (test code standing in for a student's notebook)
        "def apply_rope(x, positions=None, base=10000.0):\n    return -np.asarray(x, dtype=float)\n"
        "def rope_scores(q, k, base=10000.0):\n    return apply_rope(q, base=base) @ apply_rope(k, base=base).T\n",
        namespace,
    )
    caller = InProcessCaller({**reference, **{k: namespace[k] for k in ("apply_rope", "rope_scores")}})
    rope = grade_function("apply_rope", suite, reference, caller, float("inf"))
    scores = grade_function("rope_scores", suite, reference, caller, float("inf"))
    assert rope.score < rope.max_score
    assert scores.score == scores.max_score and scores.misconceptions == []


def test_degenerate_upstream_does_not_earn_the_dependent(suite, reference):
    """apply_rope returning zeros and rope_scores returning zeros: rope_scores is wrong logic, and the
    stand-in's correct apply_rope earns it nothing. It treats Tq ≠ Tk exactly as Tq = Tk, but zeros
    are no real answer there (issue 29): no clause is kept by default, and the feedback says why."""
    caller = InProcessCaller(
        {
            **reference,
            "apply_rope": lambda x, positions=None, base=10000.0: np.zeros(np.shape(x)),
            "rope_scores": lambda q, k, base=10000.0: np.zeros((len(q), len(k))),
        }
    )
    cell = grade_function("rope_scores", suite, reference, caller, float("inf"))
    assert lost(cell) == {"K1", "K2", "K3"} and cell.score == 0
    k2 = next(c for c in cell.clauses if c.clause == "K2")
    assert "bukan jawaban nyata" in k2.message or "Belum ada bukti" in k2.message, k2.message


WRONG_ROPE = """
def apply_rope(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    T, d = x.shape
    if d % 2:
        raise ValueError("d ganjil")
    pos = np.arange(T) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]
    h = d // 2
    a, b = x[:, :h], x[:, h:]   # rotate-half layout
    return np.concatenate([a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)], axis=1)
"""
WRONG_SCORES = """
def rope_scores(q, k, base=10000.0):
    return apply_rope(q, base=base) @ apply_rope(k, base=base).T / np.sqrt(q.shape[1])
"""


def _graded_cells(nb, notebook, suite, reference):
    result = grade_notebook(nb, notebook, suite, reference, Sandbox())
    return {c.function: c for c in result.cells}


@pytest.mark.slow
@requires_bwrap
def test_wrong_apply_rope_with_correct_rope_scores_loses_in_one_cell_in_the_sandbox(suite, reference):
    nb = with_code(reference_nb("03_rotation"), "apply_rope", WRONG_ROPE)
    cells = _graded_cells(nb, "03_rotation", suite, reference)
    assert cells["apply_rope"].score < cells["apply_rope"].max_score
    assert [m["id"] for m in cells["apply_rope"].misconceptions] == ["rope-rotate-half"]
    for fn in ("rotation_matrix", "shift_encoding", "rope_scores"):
        assert cells[fn].score == cells[fn].max_score, (
            fn,
            [c.message for c in cells[fn].clauses if not c.passed],
        )
    assert cells["rope_scores"].misconceptions == []


@pytest.mark.slow
@requires_bwrap
def test_correct_apply_rope_with_wrong_rope_scores_loses_in_one_cell_in_the_sandbox(suite, reference):
    nb = with_code(reference_nb("03_rotation"), "rope_scores", WRONG_SCORES)
    cells = _graded_cells(nb, "03_rotation", suite, reference)
    assert cells["rope_scores"].score < cells["rope_scores"].max_score
    for fn in ("rotation_matrix", "shift_encoding", "apply_rope"):
        assert cells[fn].score == cells[fn].max_score


@pytest.mark.slow
@requires_bwrap
def test_wrong_frequencies_and_transposed_rotation_are_not_charged_again(suite, reference):
    nb = with_code(
        reference_nb("02_sinusoidal"),
        "frequencies",
        "def frequencies(d_model, base=10000.0):\n    return base ** (np.arange(0, d_model, 2) / d_model)\n",
    )
    cells = _graded_cells(nb, "02_sinusoidal", suite, reference)
    assert lost(cells["frequencies"]) == {"K1"}, "inverted frequencies: one mistake, K1 (base is used alike)"
    assert cells["positional_encoding"].score == 3
    shift = (
        "def shift_encoding(pe, k, base=10000.0):\n"
        "    pe = np.asarray(pe, dtype=float)\n    d = pe.shape[-1]\n"
        "    if d % 2:\n        raise ValueError('ganjil')\n    out = np.empty_like(pe)\n"
        "    for i in range(d // 2):\n        M = rotation_matrix(k * base ** (-2 * i / d))\n"
        "        out[..., 2*i:2*i+2] = pe[..., 2*i:2*i+2] @ M.T\n    return out\n"
    )
    nb = with_code(
        with_code(
            reference_nb("03_rotation"),
            "rotation_matrix",
            "def rotation_matrix(theta):\n    c, s = np.cos(theta), np.sin(theta)\n"
            "    return np.array([[c, -s], [s, c]])\n",
        ),
        "shift_encoding",
        shift,
    )
    cells = _graded_cells(nb, "03_rotation", suite, reference)
    assert [m["id"] for m in cells["rotation_matrix"].misconceptions] == ["rotation-transposed"]
    assert cells["shift_encoding"].score == cells["shift_encoding"].max_score


@pytest.mark.slow
@requires_bwrap
def test_the_upstream_stand_in_cannot_be_kept_for_later(suite, reference):
    """A rope_scores that stashes the stand-in and an apply_rope that calls it later gains nothing."""
    code = (
        WRONG_ROPE.replace("def apply_rope(", "def _mine(")
        + """
_kept = []
def apply_rope(x, positions=None, base=10000.0):
    if _kept:
        try:
            return _kept[0](x, positions, base)
        except Exception:
            pass
    return _mine(x, positions, base)

def rope_scores(q, k, base=10000.0):
    _kept.append(apply_rope)
    return apply_rope(q, base=base) @ apply_rope(k, base=base).T
"""
    )
    nb = with_code(with_code(reference_nb("03_rotation"), "apply_rope", code), "rope_scores", "")
    cells = _graded_cells(nb, "03_rotation", suite, reference)
    assert cells["apply_rope"].score < cells["apply_rope"].max_score
    result = grade_notebook(
        nb, "03_rotation", suite, reference, Sandbox()
    )  # graded again: no memory of the stash
    assert {c.function: c.score for c in result.cells} == {fn: c.score for fn, c in cells.items()}


@pytest.mark.slow
@requires_bwrap
def test_one_mistake_one_cell_through_nbgrader_autograde(course_copy):
    course_copy.submit(
        "ani", {"03_rotation": with_code(reference_nb("03_rotation"), "apply_rope", WRONG_ROPE)}
    )
    course_copy.submit(
        "budi", {"03_rotation": with_code(reference_nb("03_rotation"), "rope_scores", WRONG_SCORES)}
    )
    course_copy.nbgrader("autograde", "positional-encoding", check=True)
    scores = course_copy.scores()
    assert scores[("ani", "03_rotation", "test_rope_scores")] == 2
    assert scores[("ani", "03_rotation", "test_apply_rope")] < 3
    assert scores[("budi", "03_rotation", "test_apply_rope")] == 3
    assert scores[("budi", "03_rotation", "test_rope_scores")] < 2
    record = course_copy.record("ani", "03_rotation")
    failed = [k for c in record["cells"] for k in c["clauses"] if not k["passed"]]
    assert failed and all(k["input"] and k["clause"] and k["text"] and k["message"] for k in failed)


FORGED_UPSTREAM_REQUEST = (
    WRONG_ROPE.replace("def apply_rope(", "def _mine(")
    + '''
import gc, io, json
import codec

def apply_rope(x, positions=None, base=10000.0):
    """Asks the grader for the correct answer to its own call, through the stand-in's channel."""
    outs = [o for o in gc.get_objects() if isinstance(o, io.TextIOWrapper) and o.writable() and o.fileno() > 2]
    ins = [o for o in gc.get_objects() if isinstance(o, io.BufferedReader) and o.fileno() > 2]
    for out in outs:
        try:
            out.write(json.dumps({"event": "upstream", "args": codec.encode([x, positions]),
                                  "kwargs": {"base": codec.encode(base)}}) + "\\n")
            out.flush()
            reply = json.loads(ins[0].readline())
            if reply.get("ok"):
                return codec.decode_untrusted(reply["value"])
        except Exception:
            pass
    return _mine(x, positions, base)
'''
)


@pytest.mark.slow
@requires_bwrap
def test_forged_stand_in_requests_earn_nothing(suite, reference):
    honest = _graded_cells(
        with_code(reference_nb("03_rotation"), "apply_rope", WRONG_ROPE), "03_rotation", suite, reference
    )
    forged = _graded_cells(
        with_code(reference_nb("03_rotation"), "apply_rope", FORGED_UPSTREAM_REQUEST),
        "03_rotation",
        suite,
        reference,
    )
    assert forged["apply_rope"].score <= honest["apply_rope"].score < 3
    assert any("protokol" in c.message for c in forged["apply_rope"].checks), (
        "the forged request reached the grader"
    )

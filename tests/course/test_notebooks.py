"""The source notebooks: they run, their reference solutions are right, and they print the chapter.

Three layers, each able to fail on its own:

1. every source notebook executes top to bottom in a real Jupyter kernel (executed once per module,
   concurrently, and reused by the output tests);
2. the reference functions loaded from the source notebooks satisfy the documented API and the
   mathematics of the chapter (hypothesis, derandomized);
3. the chapter's published numbers come out of the reference functions and appear in the executed
   notebooks' printed outputs; the plotting demos produce PNG images.

The published numbers of the chapter (the PE table for 6 positions, the periods, -0.5440, the
rotation pairs, the embedding example) are the specification and are written out here; every other
expected value is computed.
"""

from __future__ import annotations

import asyncio
import base64
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import FUNCTIONS, GRADERS, NOTEBOOKS, REPO, beside_the_notebooks
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from nbclient import NotebookClient

from pe_course.engine.discovery import load_suite

SOURCE = REPO / "source" / "positional-encoding"
STRATEGIES = load_suite(GRADERS).module("_shared.strategies")
SETTINGS = settings(derandomize=True, max_examples=30, deadline=None)
# The graders' own building blocks (graders/<assignment>/_shared/strategies.py): one definition of a bounded finite float and
# of a matrix of them. The composite cases below differ on purpose: they include T = 0 and test the
# reference's mathematics, not what a grader check draws.
FLOATS, matrix = STRATEGIES.FLOATS, STRATEGIES.matrix
EVEN_DIMS = st.integers(1, 8).map(lambda n: 2 * n)
BASES = st.sampled_from([10000.0, 100.0, 500.0, 1e5, 2.5])

# --- The chapter's published numbers (the specification) -------------------------------------
# /work/shared/seeds/000_*.txt: "Positional encoding untuk 6 posisi, d_model=8:" as printed by NumPy.
CHAPTER_PE_6x8 = np.array(
    [
        [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0],
        [0.8415, 0.5403, 0.0998, 0.995, 0.01, 1.0, 0.001, 1.0],
        [0.9093, -0.4161, 0.1987, 0.9801, 0.02, 0.9998, 0.002, 1.0],
        [0.1411, -0.99, 0.2955, 0.9553, 0.03, 0.9996, 0.003, 1.0],
        [-0.7568, -0.6536, 0.3894, 0.9211, 0.04, 0.9992, 0.004, 1.0],
        [-0.9589, 0.2837, 0.4794, 0.8776, 0.05, 0.9988, 0.005, 1.0],
    ]
)
CHAPTER_OMEGA_8 = [1.0, 0.1, 0.01, 0.001]
CHAPTER_PERIODS_8 = [6.3, 62.8, 628.3, 6283.2]
CHAPTER_PE_10_0_D32 = -0.5440
CHAPTER_ROTATION = {0: [0.1411, -0.99], 1: [0.2955, 0.9553]}  # pair i -> PE(3)[2i:2i+2], pos = 1, k = 2
# /work/shared/seeds/001_*.txt and notebook 01: V = 3, d = 2, block_size = 4.
CHAPTER_TOK = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
CHAPTER_POS = np.array([[0.0, 0.0], [0.1, 0.1], [0.2, 0.2], [0.3, 0.3]])
CHAPTER_EMBED_202 = [[5, 5], [1.1, 0.1], [5.2, 5.2]]
CHAPTER_EMBED_1111 = [[0, 1], [0.1, 1.1], [0.2, 1.2], [0.3, 1.3]]


# =============================================================================================
# 1. Execution in a real kernel
# =============================================================================================
async def _execute(path: Path, cwd: Path) -> tuple[nbformat.NotebookNode, BaseException | None]:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(cwd)}}
    )
    try:
        await client.async_execute()
    except Exception as exc:  # noqa: BLE001 (CellExecutionError, CellTimeoutError, DeadKernelError: reported by the test)
        return nb, exc
    return nb, None


async def _execute_all(paths: dict[str, Path], root: Path) -> dict[str, tuple]:
    names = list(paths)
    for name in names:
        beside_the_notebooks(SOURCE, root / name)  # data and public checks, as in JupyterLab
    results = await asyncio.gather(*(_execute(paths[name], root / name) for name in names))
    return dict(zip(names, results, strict=True))


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[str, tuple[nbformat.NotebookNode, BaseException | None]]:
    """Each source notebook executed once (concurrently), each in its own scratch working directory."""
    root = tmp_path_factory.mktemp("executed-source")
    return asyncio.run(_execute_all({name: SOURCE / f"{name}.ipynb" for name in NOTEBOOKS}, root))


def executed_nb(executed, name: str) -> nbformat.NotebookNode:
    nb, error = executed[name]
    if error is not None:
        pytest.fail(f"{name}.ipynb did not execute, so its outputs cannot be checked:\n{error}")
    return nb


def cell(nb, grade_id: str):
    found = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    assert len(found) == 1, f"expected exactly one cell with grade_id {grade_id!r}, found {len(found)}"
    return found[0]


def stdout(c) -> str:
    return "".join(o.text for o in c.get("outputs", []) if o.output_type == "stream" and o.name == "stdout")


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_source_notebook_executes_without_errors(executed, name):
    nb, error = executed[name]
    assert error is None, f"{name}.ipynb failed in a real kernel:\n{error}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name}.ipynb has no code cells"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), (
        f"{name}.ipynb: not every code cell ran, in order"
    )
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors == [], f"{name}.ipynb produced error outputs: {[e.ename for e in errors]}"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_with_the_reference_every_public_check_passes_every_clause(executed, reference, name):
    nb = executed_nb(executed, name)
    for c in nb.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if c.cell_type != "code" or not gid.startswith("test_"):
            continue
        fn, out = gid.removeprefix("test_"), stdout(c)
        for clause in reference.contracts[fn].values():
            assert f"[lolos] {clause.id} ({clause.points:g}/{clause.points:g} poin)" in out, (name, gid, out)
        assert "[gagal]" not in out and "Semua ketentuan lolos pada kasus publik" in out, out


# =============================================================================================
# 2. The reference functions: API and mathematics
# =============================================================================================
def test_reference_defines_every_graded_function(reference):
    graded = {
        c.metadata["nbgrader"]["grade_id"][len("solution_") :]
        for name in NOTEBOOKS
        for c in nbformat.read(SOURCE / f"{name}.ipynb", as_version=4).cells
        if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }
    assert graded == set(FUNCTIONS)
    assert graded <= set(reference), f"not loaded from the source notebooks: {graded - set(reference)}"


# --- embed ------------------------------------------------------------------------------------
@st.composite
def embed_cases(draw):
    vocab, d, block = draw(st.integers(1, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 8))
    length = draw(st.integers(0, block))
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length))
    return ids, draw(matrix(vocab, d)), draw(matrix(block, d))


@SETTINGS
@given(case=embed_cases())
def test_embed_rows_are_token_plus_position(reference, case):
    ids, tok, pos = case
    h = reference["embed"](ids, tok, pos)
    assert isinstance(h, np.ndarray) and np.issubdtype(h.dtype, np.floating)
    assert h.shape == (len(ids), tok.shape[1])
    for t, i in enumerate(ids):
        np.testing.assert_allclose(h[t], tok[i] + pos[t], rtol=0, atol=1e-12)
    from_array = reference["embed"](np.array(ids, dtype=int), tok, pos)
    np.testing.assert_array_equal(from_array, h)


def test_embed_edge_lengths(reference):
    embed = reference["embed"]
    assert embed([], CHAPTER_TOK, CHAPTER_POS).shape == (0, 2)
    assert embed(np.array([], dtype=int), CHAPTER_TOK, CHAPTER_POS).shape == (0, 2)
    full = embed([0, 1, 2, 1], CHAPTER_TOK, CHAPTER_POS)  # T = block_size = 4
    np.testing.assert_allclose(full, CHAPTER_TOK[[0, 1, 2, 1]] + CHAPTER_POS)
    ints = embed([1, 0], np.array([[1, 2], [3, 4]]), np.array([[0, 0], [1, 1]]))
    assert np.issubdtype(ints.dtype, np.floating)
    np.testing.assert_allclose(ints, [[3, 4], [2, 3]])


@pytest.mark.parametrize(
    ("ids", "pos_rows"), [([0, 1, 2, 0, 1], 4), ([0, 1], 1), ([2, 2, 2], 1), ([0] * 9, 8)]
)
def test_embed_rejects_sequences_longer_than_block_size(reference, ids, pos_rows):
    pos = np.arange(pos_rows * 2, dtype=float).reshape(pos_rows, 2)
    with pytest.raises(ValueError):
        reference["embed"](ids, CHAPTER_TOK, pos)


# --- one_hot ------------------------------------------------------------------------------------
@SETTINGS
@given(vocab=st.integers(1, 10), data=st.data())
def test_one_hot_has_exactly_one_one_per_row(reference, vocab, data):
    ids = data.draw(st.lists(st.integers(0, vocab - 1), max_size=10))
    out = reference["one_hot"](ids, vocab)
    assert out.shape == (len(ids), vocab) and np.issubdtype(out.dtype, np.floating)
    assert set(np.unique(out)) <= {0.0, 1.0}
    np.testing.assert_array_equal((out == 1.0).sum(axis=1), np.ones(len(ids)))
    for t, i in enumerate(ids):
        assert out[t, i] == 1.0
    table = np.arange(vocab * 3, dtype=float).reshape(vocab, 3)
    np.testing.assert_allclose(out @ table, table[ids].reshape(len(ids), 3))


# --- embed_backward ---------------------------------------------------------------------------
@st.composite
def backward_cases(draw):
    vocab, d, block = draw(st.integers(1, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 6))
    length = draw(st.integers(0, block))
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length))
    return ids, draw(matrix(length, d)), vocab, block, draw(st.integers(0, 2**32 - 1))


@SETTINGS
@given(case=backward_cases())
def test_embed_backward_matches_accumulation_and_numerical_gradient(reference, case):
    ids, grad_h, vocab, block, seed = case
    length, d = grad_h.shape
    grad_tok, grad_pos = reference["embed_backward"](ids, grad_h, vocab, block)
    assert grad_tok.shape == (vocab, d) and grad_pos.shape == (block, d)

    expected_tok = np.zeros((vocab, d))
    for t, i in enumerate(ids):  # every occurrence of a token adds its row
        expected_tok[i] += grad_h[t]
    np.testing.assert_allclose(grad_tok, expected_tok, rtol=0, atol=1e-12)
    np.testing.assert_allclose(grad_pos[:length], grad_h, rtol=0, atol=0)
    assert not np.any(grad_pos[length:]), "rows of grad_pos past T must be zero"

    # central differences of L = sum(embed(ids, tok, pos) * grad_h) on random tables
    rng = np.random.default_rng(seed)
    tok, pos = rng.normal(size=(vocab, d)), rng.normal(size=(block, d))

    def loss(tok_table, pos_table):
        return float(np.sum(reference["embed"](ids, tok_table, pos_table) * grad_h))

    eps = 1e-3  # L is linear in both tables: the difference quotient is exact up to rounding
    for table, analytic, which in [(tok, grad_tok, "tok"), (pos, grad_pos, "pos")]:
        numeric = np.zeros_like(table)
        for index in np.ndindex(table.shape):
            orig = table[index]
            table[index] = orig + eps
            up = loss(tok, pos)
            table[index] = orig - eps
            down = loss(tok, pos)
            table[index] = orig
            numeric[index] = (up - down) / (2 * eps)
        np.testing.assert_allclose(analytic, numeric, rtol=0, atol=1e-6, err_msg=f"grad_{which}")


def test_embed_backward_accumulates_repeated_ids(reference):
    grad_tok, grad_pos = reference["embed_backward"]([4, 4, 4], np.ones((3, 2)), 5, 6)
    np.testing.assert_array_equal(grad_tok[4], [3.0, 3.0])  # naive grad_tok[ids] += grad_h gives [1, 1]
    assert not np.any(grad_tok[:4])
    np.testing.assert_array_equal(grad_pos, [[1, 1]] * 3 + [[0, 0]] * 3)
    chapter_tok, chapter_pos = reference["embed_backward"]([2, 0, 2], [[1, 2], [3, 4], [5, 6]], 3, 4)
    np.testing.assert_allclose(chapter_tok, [[3, 4], [0, 0], [6, 8]])
    np.testing.assert_allclose(chapter_pos, [[1, 2], [3, 4], [5, 6], [0, 0]])


# --- frequencies and positional_encoding -----------------------------------------------------------
@SETTINGS
@given(d_model=EVEN_DIMS, base=BASES)
def test_frequencies_formula(reference, d_model, base):
    omega = reference["frequencies"](d_model, base)
    assert omega.shape == (d_model // 2,)
    np.testing.assert_allclose(omega, [base ** (-2 * i / d_model) for i in range(d_model // 2)], rtol=1e-12)


@SETTINGS
@given(length=st.integers(0, 30), d_model=EVEN_DIMS, base=BASES)
def test_positional_encoding_formula(reference, length, d_model, base):
    pe = reference["positional_encoding"](length, d_model, base)
    assert pe.shape == (length, d_model)
    expected = np.zeros((length, d_model))
    for p in range(length):
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            expected[p, 2 * i], expected[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
    np.testing.assert_allclose(pe, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("length", "d_model"), [(6, 7), (6, 1), (6, 0), (6, -2), (6, -3), (-1, 8)])
def test_positional_encoding_rejects_bad_sizes(reference, length, d_model):
    with pytest.raises(ValueError):
        reference["positional_encoding"](length, d_model)


def test_positional_encoding_length_zero(reference):
    assert reference["positional_encoding"](0, 8).shape == (0, 8)


# --- rotation_matrix and shift_encoding ---------------------------------------------------------
ANGLES = st.floats(-20, 20, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(theta=ANGLES, a=ANGLES)
def test_rotation_matrix_turns_sin_cos_pair(reference, theta, a):
    m = reference["rotation_matrix"](theta)
    assert m.shape == (2, 2)
    np.testing.assert_allclose(
        m @ [math.sin(a), math.cos(a)], [math.sin(a + theta), math.cos(a + theta)], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(m @ m.T, np.eye(2), rtol=0, atol=1e-12)
    assert math.isclose(np.linalg.det(m), 1.0, abs_tol=1e-12)


@SETTINGS
@given(p=st.integers(0, 60), data=st.data(), rows=st.integers(1, 5), d_model=EVEN_DIMS, base=BASES)
def test_shift_encoding_moves_pe_rows_by_k(reference, p, data, rows, d_model, base):
    k = data.draw(st.integers(-p, 60), label="k")  # negative shifts included, never below position 0
    table = reference["positional_encoding"](max(p, p + k) + rows, d_model, base)
    one = reference["shift_encoding"](table[p], k, base)
    assert one.shape == (d_model,)
    np.testing.assert_allclose(one, table[p + k], rtol=0, atol=1e-9)
    many = reference["shift_encoding"](table[p : p + rows], k, base)
    assert many.shape == (rows, d_model)
    np.testing.assert_allclose(many, table[p + k : p + k + rows], rtol=0, atol=1e-9)


def test_shift_encoding_negative_k_and_odd_width(reference):
    shift, pe = reference["shift_encoding"], reference["positional_encoding"](12, 8)
    np.testing.assert_allclose(shift(pe[7], -4), pe[3], atol=1e-12)
    np.testing.assert_allclose(shift(pe[5:], -5), pe[:7], atol=1e-12)
    for bad in (np.zeros(5), np.zeros((2, 3))):  # the source raises ValueError for an odd d_model
        with pytest.raises(ValueError):
            shift(bad, 1)


# --- apply_rope and rope_scores -------------------------------------------------------------------
@st.composite
def rope_inputs(draw):
    rows, d = draw(st.integers(1, 5)), draw(st.integers(1, 4).map(lambda n: 2 * n))
    positions = draw(st.none() | st.lists(st.floats(-50, 50, allow_nan=False), min_size=rows, max_size=rows))
    return draw(matrix(rows, d)), positions, draw(BASES)


@SETTINGS
@given(case=rope_inputs())
def test_apply_rope_pair_formula(reference, case):
    x, positions, base = case
    before = x.copy()
    out = reference["apply_rope"](x, positions, base)
    np.testing.assert_array_equal(x, before)  # input untouched
    rows, d = x.shape
    pos = range(rows) if positions is None else positions
    expected = np.empty_like(x)
    for t, p in enumerate(pos):
        for i in range(d // 2):
            phi = p * base ** (-2 * i / d)
            a, b = x[t, 2 * i], x[t, 2 * i + 1]
            expected[t, 2 * i] = a * math.cos(phi) - b * math.sin(phi)
            expected[t, 2 * i + 1] = a * math.sin(phi) + b * math.cos(phi)
    assert out.shape == x.shape
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-9)


def test_apply_rope_default_positions_and_odd_width(reference):
    rope = reference["apply_rope"]
    x = np.random.default_rng(0).normal(size=(5, 6))
    np.testing.assert_array_equal(rope(x), rope(x, positions=np.arange(5)))
    np.testing.assert_allclose(rope(x)[0], x[0])  # position 0 is not rotated
    with pytest.raises(ValueError):
        rope(np.ones((2, 3)))


@SETTINGS
@given(
    data=st.data(),
    tq=st.integers(1, 5),
    tk=st.integers(1, 5),
    half=st.integers(1, 4),
    shift=st.integers(1, 30),
    base=BASES,
)
def test_rope_scores_depend_only_on_offset(reference, data, tq, tk, half, shift, base):
    d = 2 * half
    q, k = data.draw(matrix(tq, d), label="q"), data.draw(matrix(tk, d), label="k")
    scores = reference["rope_scores"](q, k, base)
    assert scores.shape == (tq, tk)
    rope = reference["apply_rope"]
    # moving every query and key by the same number of positions leaves every score unchanged
    moved = rope(q, np.arange(tq) + shift, base) @ rope(k, np.arange(tk) + shift, base).T
    np.testing.assert_allclose(scores, moved, rtol=1e-9, atol=1e-7)
    # and S[m, n] = q_m · R(n - m) k_n
    for m in range(tq):
        for n in range(tk):
            relative = q[m] @ rope(k[n][None, :], [n - m], base)[0]
            assert math.isclose(scores[m, n], relative, rel_tol=1e-9, abs_tol=1e-7)


def test_rope_scores_toeplitz_for_repeated_content(reference):
    rng = np.random.default_rng(3)
    v, w = rng.normal(size=8), rng.normal(size=8)
    s = reference["rope_scores"](np.tile(v, (12, 1)), np.tile(w, (12, 1)))
    np.testing.assert_allclose(s[1:, 1:], s[:-1, :-1], atol=1e-12)
    assert math.isclose(s[0, 0], v @ w, rel_tol=1e-12)
    assert not math.isclose(s[5, 3], s[5, 0], abs_tol=1e-6)  # a different offset gives a different score


# --- position_similarity, offset_similarity, self_attention -------------------------------------
@st.composite
def similarity_cases(draw):
    rows, d = draw(st.integers(1, 8)), draw(st.integers(1, 5))
    nonzero = st.floats(0.5, 10) | st.floats(-10, -0.5)
    table = draw(matrix(rows, d))
    table[:, 0] = draw(hnp.arrays(np.float64, (rows,), elements=nonzero))  # no zero rows
    return table, draw(st.integers(0, rows - 1))


@SETTINGS
@given(case=similarity_cases())
def test_position_similarity_is_cosine(reference, case):
    pe, pos = case
    sim = reference["position_similarity"](pe, pos)
    assert sim.shape == (pe.shape[0],)
    expected = [pe[pos] @ row / (np.linalg.norm(pe[pos]) * np.linalg.norm(row)) for row in pe]
    np.testing.assert_allclose(sim, expected, rtol=1e-9, atol=1e-12)
    assert math.isclose(sim[pos], 1.0, rel_tol=1e-12)
    assert np.all(np.abs(sim) <= 1 + 1e-12)
    scaled = pe * np.linspace(0.5, 3.0, pe.shape[0])[:, None]
    np.testing.assert_allclose(reference["position_similarity"](scaled, pos), sim, atol=1e-9)


def test_offset_similarity_types_and_shapes(reference):
    f = reference["offset_similarity"]
    for scalar in (0, 7, -3, 2.5, np.int64(5)):
        assert type(f(scalar, 8)) is float, f"offset {scalar!r}: expected a Python float"
    assert f(0, 8) == 4.0
    for shape in [(3,), (2, 3), (1, 1, 4)]:
        offsets = np.arange(int(np.prod(shape))).reshape(shape) - 2
        out = f(offsets, 16)
        assert isinstance(out, np.ndarray) and out.shape == shape
        np.testing.assert_allclose(out.ravel(), [f(int(o), 16) for o in offsets.ravel()])


@SETTINGS
@given(p=st.integers(0, 80), offset=st.integers(-80, 80), d_model=EVEN_DIMS, base=BASES)
def test_offset_similarity_equals_pe_dot_product(reference, p, offset, d_model, base):
    q = p + offset
    if q < 0:
        p, q = p - offset, p  # keep both positions in the table: PE(p)·PE(p + offset) is symmetric
    pe = reference["positional_encoding"](max(p, q) + 1, d_model, base)
    assert math.isclose(
        reference["offset_similarity"](offset, d_model, base), pe[p] @ pe[q], rel_tol=1e-9, abs_tol=1e-9
    )


def _softmax_rows(scores):
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


@SETTINGS
@given(data=st.data(), rows=st.integers(1, 6), d=st.integers(1, 5))
def test_self_attention_direct_formula_and_permutation(reference, data, rows, d):
    x = data.draw(matrix(rows, d, st.floats(-3, 3, allow_nan=False)), label="x")
    out = reference["self_attention"](x)
    assert out.shape == (rows, d)
    np.testing.assert_allclose(out, _softmax_rows(x @ x.T / math.sqrt(d)) @ x, rtol=1e-9, atol=1e-9)
    # weights are a probability distribution: each output row lies in the hull of the input rows
    assert np.all(out >= x.min(axis=0) - 1e-9) and np.all(out <= x.max(axis=0) + 1e-9)
    perm = data.draw(st.permutations(range(rows)), label="perm")
    np.testing.assert_allclose(reference["self_attention"](x[perm]), out[perm], rtol=1e-9, atol=1e-9)


def test_self_attention_is_stable_for_large_inputs(reference):
    x = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0], [0.0, 0.0, 2.0], [1.0, 1.0, 1.0]]) * 1000
    with np.errstate(over="raise", invalid="raise"):
        out = reference["self_attention"](x)
    assert np.all(np.isfinite(out))
    scores = x @ x.T / math.sqrt(3)
    np.testing.assert_allclose(out, _softmax_rows(scores - scores.max(axis=1, keepdims=True)) @ x)


# =============================================================================================
# 3. The chapter's numbers come out of the reference solutions
# =============================================================================================
def test_chapter_pe_table_6_positions(reference):
    np.testing.assert_array_equal(np.round(reference["positional_encoding"](6, 8), 4), CHAPTER_PE_6x8)


def test_chapter_frequencies_and_periods(reference):
    omega = reference["frequencies"](8)
    np.testing.assert_array_equal(np.round(omega, 4), CHAPTER_OMEGA_8)
    assert [round(2 * math.pi / w, 1) for w in omega] == CHAPTER_PERIODS_8


def test_chapter_pe_pos10_d32(reference):
    assert round(float(reference["positional_encoding"](11, 32)[10, 0]), 4) == CHAPTER_PE_10_0_D32


def test_chapter_rotation_check(reference):
    pe, omega = reference["positional_encoding"](6, 8), reference["frequencies"](8)
    pos, k = 1, 2
    for i, published in CHAPTER_ROTATION.items():
        pair = slice(2 * i, 2 * i + 2)
        predicted = reference["rotation_matrix"](omega[i] * k) @ pe[pos, pair]
        np.testing.assert_array_equal(np.round(pe[pos + k, pair], 4), published)
        np.testing.assert_array_equal(np.round(predicted, 4), published)
        assert np.abs(pe[pos + k, pair] - predicted).max() < 1e-15


def test_chapter_embedding_examples(reference):
    np.testing.assert_allclose(reference["embed"]([2, 0, 2], CHAPTER_TOK, CHAPTER_POS), CHAPTER_EMBED_202)
    np.testing.assert_allclose(reference["embed"]([1, 1, 1, 1], CHAPTER_TOK, CHAPTER_POS), CHAPTER_EMBED_1111)


# =============================================================================================
# 4. The same numbers in the executed notebooks' printed outputs; demo plots are PNG images
# =============================================================================================
def np_str(array) -> str:
    with np.printoptions(precision=4, suppress=True):  # as set by the notebooks' setup cells
        return str(np.asarray(array))


def fmt_g(array) -> str:
    """The notebooks' compact ``fmt`` format: nested lists of ``{:g}`` numbers."""
    a = np.asarray(array)
    if a.ndim == 1:
        return "[" + ", ".join(f"{x:g}" for x in a) + "]"
    return "[" + ", ".join(fmt_g(row) for row in a) + "]"


def printed_matrix(text: str, header: str) -> np.ndarray:
    """The NumPy matrix printed on the lines right after ``header``."""
    block = text.split(header, 1)[1].split("]]", 1)[0]
    return np.array([float(v) for v in re.findall(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?", block)])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "grade_id"), [("02_sinusoidal", "demo_pe_table"), ("03_rotation", "demo_recap")]
)
def test_output_pe_table(executed, reference, name, grade_id):
    text = stdout(cell(executed_nb(executed, name), grade_id))
    assert np_str(reference["positional_encoding"](6, 8)) in text
    assert np_str(CHAPTER_PE_6x8) in text
    values = printed_matrix(text, "Positional encoding untuk 6 posisi, d_model=8:")
    np.testing.assert_array_equal(values.reshape(6, 8), CHAPTER_PE_6x8)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "grade_id"), [("02_sinusoidal", "demo_frequencies"), ("03_rotation", "demo_recap")]
)
def test_output_periods(executed, reference, name, grade_id):
    text = stdout(cell(executed_nb(executed, name), grade_id))
    for i, (w, period) in enumerate(zip(reference["frequencies"](8), CHAPTER_PERIODS_8, strict=True)):
        assert f"periode ~ {period} posisi" in text
        assert (
            f"kolom {2 * i}-{2 * i + 1}: omega = {w:.4f}   (periode ~ {2 * math.pi / w:.1f} posisi)" in text
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "grade_id"), [("02_sinusoidal", "demo_pe_table"), ("04_similarity", "demo_similarity_curve")]
)
def test_output_pe_pos10(executed, reference, name, grade_id):
    text = stdout(cell(executed_nb(executed, name), grade_id))
    value = reference["positional_encoding"](11, 32)[10, 0]
    assert f"sin(10 / 10000^(0/32)) = {value:.4f}" in text
    assert f"= {CHAPTER_PE_10_0_D32:.4f}" in text


@pytest.mark.slow
def test_output_rotation_check_without_the_matrix(executed):
    """02 shows the rotation property by angles and lengths, without 03's rotation_matrix: for every start
    p the angle of each pair grows by omega*k and its length stays 1."""
    text = stdout(cell(executed_nb(executed, "02_sinusoidal"), "demo_rotation"))
    for i, w in enumerate(CHAPTER_OMEGA_8[:2]):
        assert f"pasangan kolom {2 * i}-{2 * i + 1} (omega={w:.4f}), k=2: omega*k = {2 * w:.4f}" in text
    turns = re.findall(
        r"sudut bertambah ([0-9.]+) \(selisih dari omega\*k = ([0-9.e+-]+)\), panjang ([0-9.]+) -> ([0-9.]+)",
        text,
    )
    assert len(turns) == 8, text
    assert all(float(d) < 1e-15 and a == b == "1.0000" for _, d, a, b in turns), turns
    assert "M @" not in text and "M(" not in text


@pytest.mark.slow
@pytest.mark.parametrize(("name", "grade_id"), [("03_rotation", "demo_rotation_check")])
def test_output_rotation_check(executed, name, grade_id):
    text = stdout(cell(executed_nb(executed, name), grade_id))
    for i, published in CHAPTER_ROTATION.items():
        assert f"pasangan kolom {2 * i}-{2 * i + 1} (omega={CHAPTER_OMEGA_8[i]:.4f}), pos=1, k=2:" in text
        assert f"PE(3)[{2 * i}:{2 * i + 2}] = {np_str(published)}" in text
        assert f"M @ PE(1)[{2 * i}:{2 * i + 2}] = {np_str(published)}" in text
    differences = [float(x) for x in re.findall(r"selisih maksimum = ([0-9.e+-]+)", text)]
    assert len(differences) == 2 and all(d < 1e-15 for d in differences), differences  # float64 rounding only


@pytest.mark.slow
def test_output_embedding_examples(executed, reference):
    nb = executed_nb(executed, "01_embedding")
    text = stdout(cell(nb, "demo_embed_example"))
    assert f"embed([2, 0, 2]) = {fmt_g(CHAPTER_EMBED_202)}" in text
    assert f"embed([2, 0, 2]) = {fmt_g(reference['embed']([2, 0, 2], CHAPTER_TOK, CHAPTER_POS))}" in text
    assert "[[5, 5], [1.1, 0.1], [5.2, 5.2]]" in text  # the chapter's own spelling
    same = stdout(cell(nb, "demo_same_token"))
    assert f"embed([1, 1, 1, 1]) = {fmt_g(CHAPTER_EMBED_1111)}" in same
    assert "ValueError:" in stdout(cell(nb, "demo_block_size"))


PLOT_CELLS = [
    ("01_embedding", "demo_same_token"),
    ("01_embedding", "demo_backward_picture"),
    ("01_embedding", "demo_train_loop"),
    ("02_sinusoidal", "demo_heatmap_small"),
    ("02_sinusoidal", "demo_heatmap_large"),
    ("02_sinusoidal", "demo_similarity"),
    ("02_sinusoidal", "demo_frequency_scale"),
    ("02_sinusoidal", "demo_unit_circle"),
    ("03_rotation", "demo_rope_heatmap"),
    ("03_rotation", "demo_rope_picture"),
    ("03_rotation", "demo_linear_shift_picture"),
    ("03_rotation", "demo_added_vs_rope"),
    ("04_similarity", "demo_similarity_curve"),
    ("04_similarity", "demo_similarity_matrix"),
    ("04_similarity", "demo_offset_curve"),
    ("04_similarity", "demo_mask_weights"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "grade_id"), PLOT_CELLS)
def test_demo_plots_are_png_images(executed, name, grade_id):
    outputs = cell(executed_nb(executed, name), grade_id).outputs
    images = [
        o.data["image/png"] for o in outputs if o.output_type == "display_data" and "image/png" in o.data
    ]
    assert len(images) == 1, f"{name} {grade_id}: expected one image/png output, got {len(images)}"
    assert base64.b64decode(images[0]).startswith(b"\x89PNG\r\n\x1a\n")


# =============================================================================================
# 5. Why positions are needed: the two sentences of notebook 04
# =============================================================================================
@pytest.mark.slow
def test_output_permutation_equivariance_demo(executed):
    nb = executed_nb(executed, "04_similarity")
    without = stdout(cell(nb, "demo_no_position"))
    with_pe = stdout(cell(nb, "demo_with_position"))
    assert "output B == output A yang diacak: True" in without
    assert "output B == output A yang diacak: False" in with_pe
    assert "output B == output A yang diacak: False" not in without
    assert "output B == output A yang diacak: True" not in with_pe


def test_sentences_differ_only_with_positions(reference):
    """The claim of the 04 demo, recomputed from the reference functions (not the notebook's output)."""
    vocab = {"orang": 0, "menggigit": 1, "anjing": 2}
    table = np.random.default_rng(0).normal(size=(3, 8))
    a, b = ["orang", "menggigit", "anjing"], ["anjing", "menggigit", "orang"]
    xa, xb = table[[vocab[w] for w in a]], table[[vocab[w] for w in b]]
    perm = [a.index(w) for w in b]
    attend, pe = reference["self_attention"], reference["positional_encoding"](3, 8)
    np.testing.assert_allclose(attend(xb), attend(xa)[perm])
    assert not np.allclose(attend(xb + pe), attend(xa + pe)[perm])

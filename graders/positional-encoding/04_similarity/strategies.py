"""Bounded, NaN-free hypothesis strategies for 04_similarity's generated inputs (derandomized by
``pe_course.engine.drawing.draw``; the building blocks several notebooks use: ``_shared/strategies.py``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .._shared.strategies import bases, even_dims, matrix


def _rows_of_norm(draw, rows: int, d: int, norm: float) -> np.ndarray:
    """A float table whose rows all have the given norm (directions drawn away from 0)."""
    pe = draw(matrix(rows, d))
    return pe / np.linalg.norm(pe, axis=1, keepdims=True) * norm


# A common row norm away from 1 (where a dot product would equal the cosine similarity).
COMMON_NORMS = st.one_of(st.floats(0.2, 0.7, width=64), st.floats(1.5, 6.0, width=64))


@st.composite
def equal_norm_inputs(draw):
    """(pe, pos): an ordinary table for position_similarity, float rows of one common norm (not 1)."""
    rows, d = draw(st.integers(1, 10)), draw(st.integers(1, 8))
    pe = _rows_of_norm(draw, rows, d, draw(COMMON_NORMS))
    return pe, draw(st.integers(0, rows - 1))


@st.composite
def similarity_inputs(draw):
    """(pe, pos) of every class position_similarity's clauses name: float or int entries, rows of
    one common norm (ordinary when float) or of different norms; every row non-zero."""
    rows, d = draw(st.integers(1, 10)), draw(st.integers(1, 8))
    integers, equal = draw(st.booleans()), draw(st.booleans())
    if integers and equal:
        # signed permutations of one integer vector: every row has its norm
        v = np.asarray(draw(st.lists(st.integers(1, 9), min_size=d, max_size=d)), dtype=np.int64)
        pe = np.stack(
            [
                v[np.asarray(draw(st.permutations(range(d))), dtype=np.int64)]
                * np.asarray(draw(st.lists(st.sampled_from([-1, 1]), min_size=d, max_size=d)), dtype=np.int64)
                for _ in range(rows)
            ]
        )
    elif integers:
        pe = draw(hnp.arrays(np.int64, (rows, d), elements=st.integers(-9, 9)))
        pe[~pe.any(axis=1), 0] = draw(st.sampled_from([-3, 2, 5]))  # no zero row
        if rows > 1 and np.unique(np.sum(pe * pe, axis=1)).size == 1:
            pe[0] *= 2  # rows of different norms, as drawn
    elif equal:
        pe = _rows_of_norm(draw, rows, d, draw(COMMON_NORMS))
    else:
        pe = draw(matrix(rows, d))
        if rows > 1:
            pe[0] *= draw(st.sampled_from([0.5, 2.0, 3.0]))  # rows of different norms, as drawn
    return pe, draw(st.integers(0, rows - 1))


def _nonzero_int(low: int, high: int):
    return st.one_of(st.integers(-high, -low), st.integers(low, high))


@st.composite
def offset_inputs(draw):
    """(offset, d_model, base): offset a non-zero Python int, a float that is not a whole number
    (|offset| >= 1, either sign), an int array of 1, 2 or 3 dimensions with a non-zero element, or an
    empty int array;
    base the default or another (with d_model >= 4 then: for d_model = 2 the only frequency is 1
    whatever the base)."""
    # in this order, every kind is among the first examples drawn
    kind = draw(st.sampled_from(["3d", "int", "2d", "float", "1d", "empty"]))
    if kind == "int":
        offset = draw(_nonzero_int(1, 60))
    elif kind == "float":
        magnitude = draw(st.floats(1.0, 40.0, width=64))
        magnitude += 0.5 if magnitude.is_integer() else 0.0  # a float offset that is not an int one
        offset = magnitude * draw(st.sampled_from([-1.0, 1.0]))
    elif kind == "empty":  # an array with no element, of 1 to 3 dimensions
        shape = draw(st.sampled_from([(0,), (0, 3), (2, 0), (1, 0, 2)]))
        offset = np.zeros(shape, dtype=np.int64)
    else:
        ndim = int(kind[0])
        shape = tuple(draw(st.integers(1, 4 if ndim < 3 else 3)) for _ in range(ndim))
        offset = draw(hnp.arrays(np.int64, shape, elements=st.integers(-60, 60)))
        if not offset.any():
            offset.flat[0] = draw(_nonzero_int(1, 60))
    base = draw(bases)
    d_model = draw(even_dims if base == 10000.0 else st.integers(2, 16).map(lambda n: 2 * n))
    return offset, d_model, base


ATTENTION_FLOATS = st.floats(-5, 5, allow_nan=False, allow_infinity=False, width=64)


def attention_inputs():
    """x of shape (T, d) with 1 <= T <= 8, 1 <= d <= 6 and moderate values (every score below 100)."""
    return st.integers(1, 8).flatmap(
        lambda t: st.integers(1, 6).flatmap(lambda d: matrix(t, d, ATTENTION_FLOATS))
    )


def attention_max_score(x: np.ndarray) -> float:
    """The largest score x xᵀ / √d (the largest squared row norm over √d)."""
    x = np.asarray(x, dtype=np.float64)
    return float(np.max(np.sum(x * x, axis=1)) / np.sqrt(x.shape[1]))


@st.composite
def large_attention_inputs(draw):
    """x (T, d) whose largest score x xᵀ/√d is above 100: between 150 and 700; between 709.2 and
    709.7 with a near copy of its largest row, so that one exp is finite but the row's sum is not; or
    huge (10^3 to 10^6, as ``x * 1000``), where rows' maxima differ by far more than 745 (subtracting
    one maximum for the whole matrix leaves a row whose exps are all 0).
    At least two different rows: on the same x scaled down (the twin) the weights are not uniform,
    so a wrong formula shows there too, with other values."""
    x = draw(matrix(draw(st.integers(2, 6)), draw(st.integers(1, 6))))
    x = x + 0.37 * np.arange(x.shape[0])[:, None]  # no two rows alike (a constant matrix is a likely draw)
    kind = draw(st.sampled_from(["edge", "large", "huge"]))
    if kind == "edge":
        top = int(np.argmax(np.sum(x * x, axis=1)))
        x = np.vstack([x, x[top] * (1 - 1e-5)])
        target = draw(st.floats(709.2, 709.7, width=64))
    elif kind == "huge":
        x = np.vstack([x, x[:1] * 0.05])  # a row of small norm: its own maximum is far below the largest
        target = draw(st.floats(1e3, 1e6, width=64))
    else:
        target = draw(st.floats(150.0, 700.0, width=64))
    return x * np.sqrt(target / attention_max_score(x))


@st.composite
def attention_permutation_inputs(draw):
    """(x, perm): x (T, d) with T >= 2 and a permutation of its rows."""
    x = draw(matrix(draw(st.integers(2, 8)), draw(st.integers(1, 6)), ATTENTION_FLOATS))
    return x, np.asarray(draw(st.permutations(range(x.shape[0]))), dtype=np.int64)

"""Bounded, NaN-free hypothesis strategies for 03_rotation's generated inputs (derandomized by
``pe_course.engine.drawing.draw``; the building blocks several notebooks use: ``_shared/strategies.py``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .._shared.strategies import FLOATS, bases, even_dims, matrix, rows_with_even_dim

angles = st.floats(-20, 20, allow_nan=False, allow_infinity=False)


shifts = st.integers(-60, 60)


def rotation_angles():
    """A single angle theta in [-20, 20]."""
    return angles


def angle_pairs():
    """(a, theta): a (sin a, cos a) pair's angle and the rotation angle."""
    return st.tuples(angles, angles)


INTS = st.one_of(st.integers(-9, -1), st.integers(1, 9))  # int entries away from 0, as FLOATS


def _rows(draw, d: int, one_row: bool, integers: bool):
    """``pe``/``x`` rows: one row (d,) or a table (T, d), of floats or (as K2 of shift_encoding allows) ints."""
    shape = (d,) if one_row else (draw(st.integers(1, 6)), d)
    if integers:
        return draw(hnp.arrays(np.int64, shape, elements=INTS))
    return draw(hnp.arrays(np.float64, shape, elements=FLOATS))


# k: positive (ordinary), negative or zero (K3); each often enough in 25 draws
shift_amounts = st.tuples(st.sampled_from([1, -1, 0]), st.integers(1, 60)).map(lambda t: t[0] * t[1])


@st.composite
def shift_inputs(draw):
    """(pe, k, base) with even d_model: every class the clauses of shift_encoding name, and their
    combinations: one row (d,) or rows (T, d), float or int entries, k positive, zero or negative,
    the default base or another."""
    d = draw(even_dims)
    pe = _rows(draw, d, draw(st.booleans()), draw(st.integers(0, 3)) == 0)
    return pe, draw(shift_amounts), draw(bases)


@st.composite
def shift_odd_inputs(draw):
    """(pe, k, base) with odd d_model (K4: ValueError), with every other class: one row or a table,
    float or int entries, k zero (an early return for k = 0 must not skip the check) or not, any base."""
    d = draw(st.integers(0, 7).map(lambda n: 2 * n + 1))
    pe = _rows(draw, d, draw(st.booleans()), draw(st.booleans()))
    return pe, draw(st.one_of(st.just(0), shifts)), draw(bases)


@st.composite
def shift_ordinary_inputs(draw):
    """(pe, k): ordinary inputs of shift_encoding (K1): a float table (T, d_model), even d_model, k > 0."""
    return draw(matrix(draw(st.integers(1, 6)), draw(even_dims))), draw(st.integers(1, 60))


@st.composite
def pe_shift_inputs(draw):
    """(d_model, start, count, k): rows start .. start+count-1 of a PE table (base 10000) shifted by k > 0."""
    d = draw(st.integers(1, 12).map(lambda n: 2 * n))
    return d, draw(st.integers(0, 40)), draw(st.integers(1, 6)), draw(st.integers(1, 60))


# Real positions in steps of 1/4: integers, or clearly fractional (a fraction within rounding of an
# integer would be told apart from it by nothing but rounding).
positions_values = st.integers(-200, 800).map(lambda n: n / 4)


@st.composite
def rope_positions(draw, t: int):
    """``positions`` for T rows, as K2 of apply_rope allows: None (the default, most often), a list or an
    array; of non-negative integers (0 .. T-1 included), negative or fractional numbers."""
    kind = draw(st.sampled_from(["none", "none", "list", "list-float", "array", "array-int", "arange"]))
    if kind == "none":
        return None
    if kind == "arange":
        return list(range(t)) if draw(st.booleans()) else np.arange(t, dtype=np.int64)
    if kind == "array-int":
        return np.asarray(draw(st.lists(st.integers(0, 60), min_size=t, max_size=t)), dtype=np.int64)
    if kind == "list":
        return draw(st.lists(st.integers(-50, 200), min_size=t, max_size=t))
    values = draw(st.lists(positions_values, min_size=t, max_size=t))
    if kind == "list-float":
        return [float(v) for v in values]
    return np.asarray(values, dtype=np.float64)


@st.composite
def rope_inputs(draw):
    """(x, positions, base): x (T, d) with even d; positions None, a list or an array of length T
    (see rope_positions); the default base or another."""
    x = draw(rows_with_even_dim(max_rows=6))
    return x, draw(rope_positions(x.shape[0])), draw(bases)


@st.composite
def rope_odd_inputs(draw):
    """(x, positions, base): x (T, d) with odd d (K4: ValueError), positions and base as in rope_inputs."""
    x = draw(matrix(draw(st.integers(1, 6)), draw(st.integers(0, 7).map(lambda n: 2 * n + 1))))
    return x, draw(rope_positions(x.shape[0])), draw(bases)


def rope_ordinary_inputs():
    """x (T, d) with even d: an ordinary input of apply_rope (default positions and base)."""
    return rows_with_even_dim(max_rows=6)


# moderate values away from 0 (scores stay small; a zero vector would hide a mistake)
SMALL = st.one_of(
    st.floats(-3, -0.25, allow_nan=False, allow_infinity=False, width=64),
    st.floats(0.25, 3, allow_nan=False, allow_infinity=False, width=64),
)


@st.composite
def rope_relative_inputs(draw):
    """(q, k, pos_q, pos_k, c): same even d, non-negative integer positions (arrays) and a shift c >= 1."""
    d = draw(even_dims)
    tq, tk = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    q, k = draw(matrix(tq, d, SMALL)), draw(matrix(tk, d, SMALL))
    pos_q = np.asarray(draw(st.lists(st.integers(0, 30), min_size=tq, max_size=tq)), dtype=np.float64)
    pos_k = np.asarray(draw(st.lists(st.integers(0, 30), min_size=tk, max_size=tk)), dtype=np.float64)
    return q, k, pos_q, pos_k, draw(st.integers(1, 100))


@st.composite
def rope_scores_inputs(draw):
    """(q, k, base): q (Tq, d) and k (Tk, d) with the same even d; Tq = Tk (ordinary) or not (K2);
    the default base or another (K3)."""
    d = draw(even_dims)
    tq = draw(st.integers(1, 6))
    tk = draw(st.one_of(st.just(tq), st.integers(1, 6)))
    return draw(matrix(tq, d, SMALL)), draw(matrix(tk, d, SMALL)), draw(bases)


@st.composite
def tiled_rope_inputs(draw):
    """(v, w, Tq, Tk, base): one query vector and one key vector repeated at every position."""
    d = draw(even_dims)
    v = draw(hnp.arrays(np.float64, (d,), elements=SMALL))
    w = draw(hnp.arrays(np.float64, (d,), elements=SMALL))
    tq = draw(st.integers(2, 10))
    return v, w, tq, draw(st.one_of(st.just(tq), st.integers(2, 10))), draw(bases)


@st.composite
def tiled_ordinary_inputs(draw):
    """(v, w, T): one query and one key vector repeated at T >= 2 positions (Tq = Tk, default base)."""
    d = draw(even_dims)
    v = draw(hnp.arrays(np.float64, (d,), elements=SMALL))
    w = draw(hnp.arrays(np.float64, (d,), elements=SMALL))
    return v, w, draw(st.integers(2, 10))

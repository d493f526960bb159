"""Bounded, NaN-free hypothesis strategies for the graders' generated inputs.

All sizes are small (grading must stay fast) and all floats are finite and moderate, so that a
correct implementation can never fail on rounding; ``checks.draw`` makes them deterministic.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Values away from 0: a mistake shows on every input (an all-zero grad_h hides a mistake in grad_pos,
# and a failure's twin must not pass by accident; see pe_course.public_checks).
FLOATS = st.one_of(
    st.floats(-10, -0.25, allow_nan=False, allow_infinity=False, width=64),
    st.floats(0.25, 10, allow_nan=False, allow_infinity=False, width=64),
)


def matrix(rows: int, cols: int, elements=FLOATS):
    return hnp.arrays(np.float64, (rows, cols), elements=elements)


def id_sequence(draw, vocab: int, length: int):
    """Token ids as the contract allows them: a Python list or a 1-D int array."""
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length))
    return np.asarray(ids, dtype=np.int64) if draw(st.booleans()) else ids


def table(draw, rows: int, cols: int):
    """A float table, or (as the contract allows) one of integers."""
    if draw(st.integers(0, 3)) == 0:
        return draw(hnp.arrays(np.int64, (rows, cols), elements=st.integers(-9, 9)))
    return draw(matrix(rows, cols))


# -- 01_embedding ---------------------------------------------------------------------------------
@st.composite
def embed_inputs(draw, allow_too_long: bool = False):
    """(ids, tok_table, pos_table) with 1 <= T <= block_size (T = block_size included), ids a list or
    an array, each table float or int; or T > block_size when asked.

    T = 0 has its own check (and clause).
    """
    vocab = draw(st.integers(1, 10))
    d = draw(st.integers(1, 6))
    block = draw(st.integers(1, 10))
    if allow_too_long:
        length = draw(st.integers(block + 1, block + 4))
    else:
        length = draw(st.one_of(st.just(block), st.integers(1, block)))
    return id_sequence(draw, vocab, length), table(draw, vocab, d), table(draw, block, d)


def embed_too_long_inputs():
    return embed_inputs(allow_too_long=True)


@st.composite
def same_token_inputs(draw):
    """(token, tok_table, pos_table): float tables with block_size >= 2 (the property uses T = block_size - 1)."""
    vocab, d = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    return draw(st.integers(0, vocab - 1)), draw(matrix(vocab, d)), draw(matrix(draw(st.integers(2, 8)), d))


@st.composite
def one_hot_inputs(draw):
    """(ids, vocab_size) with 1 <= T <= 10 (T = 0 has its own check)."""
    vocab = draw(st.integers(1, 12))
    return id_sequence(draw, vocab, draw(st.integers(1, 10))), vocab


@st.composite
def lookup_inputs(draw):
    """(ids, table): an int array of ids (length >= 1) and a float table (V, d)."""
    vocab, d = draw(st.integers(1, 8)), draw(st.integers(1, 4))
    ids = np.asarray(draw(st.lists(st.integers(0, vocab - 1), min_size=1, max_size=8)), dtype=np.int64)
    return ids, draw(matrix(vocab, d))


@st.composite
def embed_backward_inputs(draw):
    """(ids, grad_h, vocab_size, block_size) with 1 <= T <= block_size (T = 0 has its own check)."""
    vocab = draw(st.integers(1, 8))
    d = draw(st.integers(1, 5))
    block = draw(st.integers(1, 10))
    length = draw(st.one_of(st.just(block), st.integers(1, block)))
    return id_sequence(draw, vocab, length), draw(matrix(length, d)), vocab, block


@st.composite
def repeated_ids_inputs(draw):
    """(ids, grad_h, vocab_size, block_size): an int array with repeated ids whose largest is V - 1,
    T < block_size (an ordinary input)."""
    vocab, d = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=1, max_size=7)) + [vocab - 1, vocab - 1]
    ids = np.asarray(draw(st.permutations(ids)), dtype=np.int64)
    return ids, draw(matrix(len(ids), d)), vocab, len(ids) + draw(st.integers(1, 3))


even_dims = st.integers(1, 16).map(lambda n: 2 * n)


def base_kwargs(base: float) -> dict:
    """Pass ``base`` only when it is not the default, so both call styles are exercised."""
    return {} if base == 10000.0 else {"base": base}


bases = st.sampled_from([10000.0, 10000.0, 100.0, 500.0, 1e5, 100])  # an int base too


# 02_sinusoidal: the default base (its own clause's ordinary input) about half of the time, else a
# positive base away from it (K2 of frequencies and positional_encoding), fractional ones included.
sinusoidal_bases = st.one_of(
    st.just(10000.0),
    st.sampled_from([100.0, 500.0, 1e5, 2.5, 50, 500]),  # int bases too: "any positive number"
    st.floats(1.5, 5e4, allow_nan=False, allow_infinity=False).map(lambda b: round(b, 2)),
)


@st.composite
def pe_inputs(draw):
    """(length, d_model, base) for positional_encoding, every valid class: length >= 1 or length = 0,
    d_model even and positive (2 included), base the default or given; their combinations too."""
    length = draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13, 21, 40]))  # 16 draws: 0 twice, base 7 times
    return length, draw(even_dims), draw(sinusoidal_bases)


@st.composite
def rows_with_even_dim(draw, max_rows: int = 8, elements=FLOATS):
    """x of shape (T, d) with even d."""
    return draw(matrix(draw(st.integers(1, max_rows)), draw(even_dims), elements))


angles = st.floats(-20, 20, allow_nan=False, allow_infinity=False)
shifts = st.integers(-60, 60)


# -- 02_sinusoidal ------------------------------------------------------------------------------
@st.composite
def frequencies_inputs(draw):
    """(d_model, base) with even positive d_model (odd d_model is outside the contract of frequencies);
    base the default (10000.0, about half of the examples) or another positive number."""
    return draw(st.one_of(st.just(2), st.integers(1, 32).map(lambda n: 2 * n))), draw(sinusoidal_bases)


@st.composite
def pe_invalid_inputs(draw):
    """(length, d_model, base) on which positional_encoding must raise ValueError: d_model odd, zero or
    negative (with length = 0 as often as not), or length negative."""
    kind = draw(st.sampled_from(["odd", "not-positive", "negative-length"]))
    length = draw(st.one_of(st.just(0), st.integers(1, 12)))
    d_model = draw(even_dims)
    if kind == "odd":
        d_model = draw(st.integers(0, 16).map(lambda n: 2 * n + 1))
    elif kind == "not-positive":
        d_model = draw(st.integers(-8, 0))
    else:
        length = draw(st.integers(-12, -1))
        d_model = draw(st.one_of(even_dims, st.integers(-3, 9)))
    return length, d_model, draw(sinusoidal_bases)


# -- 03_rotation --------------------------------------------------------------------------------
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


# -- 04_similarity ------------------------------------------------------------------------------
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

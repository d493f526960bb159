"""Bounded, NaN-free hypothesis strategies for the graders' generated inputs.

All sizes are small (grading must stay fast) and all floats are finite and moderate, so that a
correct implementation can never fail on rounding; ``checks.draw`` makes them deterministic.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOATS = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def matrix(rows: int, cols: int, elements=FLOATS):
    return hnp.arrays(np.float64, (rows, cols), elements=elements)


@st.composite
def embed_inputs(draw, allow_too_long: bool = False):
    """(ids, tok_table, pos_table) with T <= block_size (or T > block_size when asked)."""
    vocab = draw(st.integers(1, 10))
    d = draw(st.integers(1, 6))
    block = draw(st.integers(1, 10))
    length = draw(st.integers(block + 1, block + 4) if allow_too_long else st.integers(0, block))
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length))
    return ids, draw(matrix(vocab, d)), draw(matrix(block, d))


def embed_too_long_inputs():
    return embed_inputs(allow_too_long=True)


@st.composite
def one_hot_inputs(draw):
    vocab = draw(st.integers(1, 12))
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=0, max_size=10))
    return ids, vocab


@st.composite
def embed_backward_inputs(draw):
    """(ids, grad_h, vocab_size, block_size)."""
    vocab = draw(st.integers(1, 8))
    d = draw(st.integers(1, 5))
    block = draw(st.integers(1, 10))
    length = draw(st.integers(0, block))
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length))
    return ids, draw(matrix(length, d)), vocab, block


even_dims = st.integers(1, 16).map(lambda n: 2 * n)
bases = st.sampled_from([10000.0, 10000.0, 100.0, 500.0, 1e5])


@st.composite
def pe_inputs(draw):
    """(length, d_model, base) for positional_encoding."""
    return draw(st.integers(0, 40)), draw(even_dims), draw(bases)


@st.composite
def rows_with_even_dim(draw, max_rows: int = 8, elements=FLOATS):
    """x of shape (T, d) with even d."""
    return draw(matrix(draw(st.integers(1, max_rows)), draw(even_dims), elements))


angles = st.floats(-20, 20, allow_nan=False, allow_infinity=False)
shifts = st.integers(-60, 60)

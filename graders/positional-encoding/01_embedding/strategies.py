"""Bounded, NaN-free hypothesis strategies for 01_embedding's generated inputs (derandomized by
``pe_course.engine.drawing.draw``; the building blocks several notebooks use: ``_shared/strategies.py``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .._shared.strategies import matrix


def id_sequence(draw, vocab: int, length: int):
    """Token ids as the contract allows them: a Python list or a 1-D int array."""
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=length, max_size=length))
    return np.asarray(ids, dtype=np.int64) if draw(st.booleans()) else ids


def table(draw, rows: int, cols: int):
    """A float table, or (as the contract allows) one of integers."""
    if draw(st.integers(0, 3)) == 0:
        return draw(hnp.arrays(np.int64, (rows, cols), elements=st.integers(-9, 9)))
    return draw(matrix(rows, cols))


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

"""Wrong students of 01_embedding's graded functions, for the self-validation (``pe-course build``):
``@careful`` code with one catalogued misconception (diagnosed with exactly it), ``@flawed`` code with
one realistic slip (losing exactly the clauses named); see ``pe_course.engine.declarations``.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import careful, flawed

from .alternatives import backward_onehot


# -- one catalogued misconception inside otherwise careful code ----------------------------------
@careful("embed", "pos-indexed-by-ids")
def embed_checked_but_pos_by_ids(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[ids]


@careful("embed", "missing-position")
def embed_without_position_but_checked(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("T melebihi block_size")
    return tok_table[ids]


@careful("embed", "no-block-size-check")
def embed_block_size_check_only_missing(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    return tok_table[ids] + pos_table[np.arange(len(ids))]


@careful("embed_backward", "pos-indexed-by-ids")
def backward_pos_by_ids_careful(ids, grad_h, vocab_size, block_size):
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    grad_tok = np.zeros((vocab_size, grad_h.shape[1]))
    np.add.at(grad_tok, ids, grad_h)
    grad_pos = np.zeros((block_size, grad_h.shape[1]))
    np.add.at(grad_pos, ids, grad_h)
    return grad_tok, grad_pos


# -- one realistic slip each, in otherwise correct code: exactly the clauses named are charged -----
@flawed("embed", "K4")
def embed_boundary_off_by_one(ids, tok_table, pos_table):
    """``>=`` for ``>``: refuses T = block_size."""
    ids = np.asarray(ids, dtype=int)
    if len(ids) >= len(pos_table):
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[: len(ids)]


@flawed("embed", "K2")
def embed_list_ids_unhandled(ids, tok_table, pos_table):
    """Reads ``ids.shape``: a Python list has none."""
    T = ids.shape[0]
    if pos_table.shape[0] < T:
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[:T]


@flawed("embed", "K3")
def embed_empty_ids_as_float(ids, tok_table, pos_table):
    """``np.array(ids)`` without a dtype: ``[]`` becomes a float array that cannot index."""
    ids = np.array(ids)
    if len(ids) > len(pos_table):
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[: len(ids)]


@flawed("embed", "K2")
def embed_int_tables_overflow(ids, tok_table, pos_table):
    """Writes into an output of the tables' dtype: int tables get the wrong values when mixed."""
    ids = np.asarray(ids, dtype=int)
    if len(ids) > len(pos_table):
        raise ValueError("T melebihi block_size")
    out = np.empty((len(ids), tok_table.shape[1]), dtype=tok_table.dtype)
    out[:] = tok_table[ids]
    out += pos_table[: len(ids)].astype(tok_table.dtype)
    return out


@flawed("one_hot", "K3")
def one_hot_empty_ids_as_float(ids, vocab_size):
    ids = np.array(ids)
    out = np.zeros((len(ids), vocab_size))
    out[np.arange(len(ids)), ids] = 1.0
    return out


@flawed("embed_backward", "K2")
def backward_returns_lists(ids, grad_h, vocab_size, block_size):
    """Right values, returned as nested lists."""
    grad_tok, grad_pos = backward_onehot(ids, grad_h, vocab_size, block_size)
    return grad_tok.tolist(), grad_pos.tolist()


@flawed("embed_backward", "K2")
def backward_bincount_without_minlength(ids, grad_h, vocab_size, block_size):
    """``np.bincount`` per column without ``minlength``: only as many rows as the largest id + 1."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.stack([np.bincount(ids, weights=grad_h[:, j]) for j in range(d)], axis=1)
    grad_pos = np.zeros((block_size, d))
    grad_pos[: len(ids)] = grad_h
    return grad_tok, grad_pos


@flawed("embed_backward", "K3")
def backward_block_size_full_unhandled(ids, grad_h, vocab_size, block_size):
    """Pads grad_pos with ``block_size - T`` rows through a slice that breaks for T = block_size."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.zeros((vocab_size, d))
    np.add.at(grad_tok, ids, grad_h)
    if len(ids) == block_size:
        raise IndexError("tidak ada baris nol yang tersisa")
    return grad_tok, np.vstack([grad_h, np.zeros((block_size - len(ids), d))])


# -- students written against the release of 2026-12-03 (issue 29): each slip shows on a public case
@flawed("embed", "K2")
def embed_in_place_on_pos(ids, tok_table, pos_table):
    """Adds the token rows into a copy of pos_table in place: an int pos_table cannot take floats."""
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) > len(pos_table):
        raise ValueError("T > block_size")
    h = pos_table[: len(ids)].copy()
    h += tok_table[ids]
    return h


@flawed("embed_backward", "K2")
def backward_grad_pos_unpadded(ids, grad_h, vocab_size, block_size):
    """grad_pos is grad_h itself: (T, d), not (block_size, d), whenever T < block_size."""
    ids = np.asarray(ids, dtype=np.int64)
    grad_tok = np.zeros((vocab_size, grad_h.shape[1]))
    np.add.at(grad_tok, ids, grad_h)
    return grad_tok, np.array(grad_h, dtype=float)

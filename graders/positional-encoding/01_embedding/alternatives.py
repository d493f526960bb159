"""Correct implementations of 01_embedding's graded functions (``@alternative``): genuinely different
from the reference only where the contract leaves a choice open. Each must score full marks with
no misconception diagnosed, by the graders and by the public check (``pe-course build``).
Self-contained (NumPy only): ``tests/build/test_self_validation.py`` pastes this file into a notebook.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import alternative


@alternative("embed")
def embed_onehot_matmul(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int).reshape(-1)
    if len(ids) > len(pos_table):
        raise ValueError("panjang melebihi block_size")
    one_hot = (ids[:, None] == np.arange(len(tok_table))[None, :]).astype(float)
    return one_hot @ tok_table + np.eye(len(pos_table))[: len(ids)] @ pos_table


@alternative("embed")
def embed_take(ids, tok_table, pos_table):
    """np.take on a list of ids; keeps the tables' dtype (int tables give an int result)."""
    ids = [int(i) for i in ids]
    if len(ids) > len(pos_table):
        raise ValueError("panjang melebihi block_size")
    return np.take(tok_table, ids, axis=0) + np.asarray(pos_table)[: len(ids)]


@alternative("embed")
def embed_loop(ids, tok_table, pos_table):
    ids = list(ids)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("panjang melebihi block_size")
    out = np.zeros((len(ids), tok_table.shape[1]))
    for t, token in enumerate(ids):
        out[t] = tok_table[token] + pos_table[t]
    return out


@alternative("one_hot")
def one_hot_eye(ids, vocab_size):
    return np.eye(vocab_size)[np.asarray(ids, dtype=int).reshape(-1)]


@alternative("one_hot")
def one_hot_int(ids, vocab_size):
    """Integer 0/1 entries: the contract asks for values, not a dtype."""
    return np.eye(vocab_size, dtype=np.int64)[np.asarray(ids, dtype=np.int64)]


@alternative("one_hot")
def one_hot_loop(ids, vocab_size):
    out = np.zeros((len(ids), vocab_size))
    for t, token in enumerate(ids):
        out[t][token] = 1
    return out


@alternative("one_hot")
def one_hot_bool(ids, vocab_size):
    """A comparison table: bool entries, read as 0/1 (the contract asks for values, not a dtype)."""
    ids = np.asarray(ids, dtype=np.int64)
    return ids[:, None] == np.arange(vocab_size)


@alternative("embed_backward")
def backward_onehot(ids, grad_h, vocab_size, block_size):
    ids = np.asarray(ids, dtype=int).reshape(-1)
    grad_h = np.asarray(grad_h, dtype=float)
    one_hot = np.eye(vocab_size)[ids]
    grad_pos = np.zeros((block_size, grad_h.shape[1]))
    grad_pos[: len(ids)] = grad_h
    return one_hot.T @ grad_h, grad_pos


@alternative("embed_backward")
def backward_loop(ids, grad_h, vocab_size, block_size):
    d = np.shape(grad_h)[1]
    grad_tok, grad_pos = np.zeros((vocab_size, d)), np.zeros((block_size, d))
    for t, token in enumerate(ids):
        grad_tok[token] += grad_h[t]
        grad_pos[t] += grad_h[t]
    return grad_tok, grad_pos

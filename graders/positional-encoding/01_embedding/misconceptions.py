"""Catalogue of 01_embedding's misconceptions (``@misconception``): documented wrong implementations
with a hint for students; each docstring says what the mistaken idea is (how one is diagnosed:
``pe_course.engine.diagnosis``).
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import misconception


def _check_block_size(ids, pos_table):
    """The reference's T > block_size check, so that an embed variant differs only by its misconception."""
    if len(ids) > len(pos_table):
        raise ValueError(f"panjang urutan T={len(ids)} melebihi block_size={len(pos_table)}")


@misconception(
    "embed",
    "pos-indexed-by-ids",
    "Vektor posisi diambil dengan indeks posisi t (pos_table[:T]), bukan dengan id token. "
    "Posisi ke-t selalu memakai baris ke-t, apa pun tokennya.",
)
def embed_pos_by_ids(ids, tok_table, pos_table):
    """Looks the position table up with the token ids instead of the positions 0..T-1."""
    ids = np.asarray(ids, dtype=int)
    _check_block_size(ids, pos_table)
    return tok_table[ids] + pos_table[ids]


@misconception(
    "embed",
    "concat-not-add",
    "Embedding posisi ditambahkan (h_t = tok[ids_t] + pos[t]), bukan digabung; ukuran vektor tetap d.",
)
def embed_concat(ids, tok_table, pos_table):
    """Concatenates token and position vectors, giving (T, 2d) instead of adding them."""
    ids = np.asarray(ids, dtype=int)
    _check_block_size(ids, pos_table)
    return np.concatenate([tok_table[ids], pos_table[: len(ids)]], axis=1)


@misconception(
    "embed",
    "missing-position",
    "Jangan lupa menambahkan vektor posisi pos_table[t]; tanpa itu token yang sama di "
    "posisi berbeda menghasilkan vektor yang sama.",
)
def embed_no_position(ids, tok_table, pos_table):
    """Returns only the token lookup; the position row is never added."""
    ids = np.asarray(ids, dtype=int)
    _check_block_size(ids, pos_table)
    return tok_table[ids]


@misconception(
    "embed",
    "no-block-size-check",
    "Periksa panjang dulu: jika T > pos_table.shape[0] (block_size), lempar ValueError dengan "
    "pesan yang jelas, karena tabel posisi yang dipelajari tidak punya baris untuk posisi itu.",
)
def embed_no_check(ids, tok_table, pos_table):
    """Indexes pos_table with arange(T) without checking T <= block_size (IndexError instead)."""
    ids = np.asarray(ids, dtype=int)
    return tok_table[ids] + pos_table[np.arange(len(ids))]


@misconception(
    "one_hot",
    "one-hot-transposed",
    "Bentuknya (T, vocab_size): satu baris per posisi, dengan 1.0 di kolom ids[t].",
)
def one_hot_transposed(ids, vocab_size):
    """Builds the (vocab_size, T) matrix: one column per position."""
    ids = np.asarray(ids, dtype=int)
    out = np.zeros((vocab_size, len(ids)))
    out[ids, np.arange(len(ids))] = 1.0
    return out


@misconception(
    "embed_backward",
    "add-at-missing",
    "grad_tok[ids] += grad_h tidak menjumlahkan id yang berulang (hanya satu yang tersimpan). "
    "Pakai np.add.at(grad_tok, ids, grad_h).",
)
def backward_without_add_at(ids, grad_h, vocab_size, block_size):
    """Uses buffered fancy-index assignment, so repeated ids keep only one gradient."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.zeros((vocab_size, d))
    grad_tok[ids] += grad_h
    grad_pos = np.zeros((block_size, d))
    grad_pos[: len(ids)] = grad_h
    return grad_tok, grad_pos


@misconception(
    "embed_backward",
    "pos-indexed-by-ids",
    "grad_pos[t] menerima grad_h[t] menurut *posisi* t, bukan menurut id token: "
    "posisi ke-t selalu memakai baris ke-t tabel posisi, apa pun tokennya.",
)
def backward_pos_by_ids(ids, grad_h, vocab_size, block_size):
    """Accumulates the position gradient by token id (the forward pass's pos-indexed-by-ids, carried over)."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.zeros((vocab_size, d))
    np.add.at(grad_tok, ids, grad_h)
    grad_pos = np.zeros((block_size, d))
    np.add.at(grad_pos, ids, grad_h)
    return grad_tok, grad_pos

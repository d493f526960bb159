"""Checks for 01_embedding: embed, one_hot, embed_backward."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, assert_close, check, draw, require_shape

from . import strategies as s
from .cases import cases

NOTEBOOK = "01_embedding"


# -- embed (3 points) -------------------------------------------------------------------------
@check("embed", "contoh-bab", points=0.75, title="Contoh dari bab: ids = [2, 0, 2] dan [1, 1, 1, 1]")
def embed_chapter(g: Grader) -> None:
    for case in cases("embed"):
        g.expect("embed", *case.args, public=case.public)


@check("embed", "acak", points=1.0, title="Input acak dibandingkan dengan solusi referensi")
def embed_random(g: Grader) -> None:
    for ids, tok, pos in draw(s.embed_inputs, 25):
        g.expect("embed", ids, tok, pos)


@check("embed", "tepi", points=0.5, title="Kasus tepi: T = 0, T = block_size, ids berupa np.ndarray")
def embed_edges(g: Grader) -> None:
    rng = np.random.default_rng(1)
    tok, pos = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    out = g.call("embed", [], tok, pos, public=True)
    assert_close(out, np.zeros((0, 3)), "keluaran `embed` untuk ids kosong (T = 0)")
    g.expect("embed", [4, 0, 4, 1], tok, pos, what="keluaran `embed` untuk T = block_size")
    g.expect("embed", np.array([3, 3, 2]), tok, pos, what="keluaran `embed` untuk ids berupa np.ndarray")


@check("embed", "batas-block-size", points=0.5, title="ValueError jika T > block_size")
def embed_too_long(g: Grader) -> None:
    tok, pos = np.eye(3), np.zeros((2, 3))
    g.expect_raises("embed", "ValueError", [0, 1, 2], tok, pos, public=True)
    for ids, tok, pos in draw(s.embed_too_long_inputs, 5):
        g.expect_raises("embed", "ValueError", ids, tok, pos)


@check("embed", "posisi-membedakan", points=0.25, title="Token sama di posisi berbeda: selisihnya = selisih pos_table")
def embed_same_token(g: Grader) -> None:
    rng = np.random.default_rng(2)
    tok, pos = rng.normal(size=(4, 5)), rng.normal(size=(6, 5))
    out = g.call("embed", [1, 1, 1, 1, 1, 1], tok, pos)
    assert_close(out - out[0], pos - pos[0], "selisih baris keluaran untuk token yang sama")


# -- one_hot (1 point) ------------------------------------------------------------------------
@check("one_hot", "contoh", points=0.25, title="Contoh kecil: ids = [2, 0, 2], vocab_size = 3")
def one_hot_example(g: Grader) -> None:
    for case in cases("one_hot"):
        g.expect("one_hot", *case.args, public=case.public)


@check("one_hot", "acak", points=0.5, title="Input acak (termasuk T = 0) dibandingkan dengan referensi")
def one_hot_random(g: Grader) -> None:
    for ids, vocab in draw(s.one_hot_inputs, 20):
        g.expect("one_hot", ids, vocab)


@check("one_hot", "lookup", points=0.25, title="one_hot(ids) @ tabel sama dengan tabel[ids]")
def one_hot_is_lookup(g: Grader) -> None:
    table = np.random.default_rng(3).normal(size=(7, 4))
    ids = [6, 0, 3, 3, 1]
    one_hot = require_shape(g.call("one_hot", ids, 7), (5, 7), "keluaran `one_hot(ids, 7)`")
    assert_close(one_hot @ table, table[ids], "one_hot(ids, 7) @ tabel (harus sama dengan tabel[ids])")


# -- embed_backward (3 points) ----------------------------------------------------------------
@check("embed_backward", "contoh-bab", points=0.75, title="Contoh: ids = [2, 0, 2] dengan grad_h berisi satu")
def backward_example(g: Grader) -> None:
    for case in cases("embed_backward"):
        g.expect("embed_backward", *case.args, public=case.public)


@check("embed_backward", "acak", points=1.0, title="Input acak dibandingkan dengan solusi referensi")
def backward_random(g: Grader) -> None:
    for ids, grad_h, vocab, block in draw(s.embed_backward_inputs, 25):
        g.expect("embed_backward", ids, grad_h, vocab, block)


@check("embed_backward", "akumulasi-id-berulang", points=0.75,
       title="Token yang muncul berkali-kali menjumlahkan semua gradiennya")
def backward_accumulates(g: Grader) -> None:
    grad_h = np.arange(12, dtype=float).reshape(4, 3)
    grad_tok, _ = g.call("embed_backward", [1, 1, 1, 1], grad_h, 3, 4, public=True)
    assert_close(grad_tok, np.stack([np.zeros(3), grad_h.sum(axis=0), np.zeros(3)]),
                 "grad_tok untuk ids = [1, 1, 1, 1]", inputs="ids = [1, 1, 1, 1]")


@check("embed_backward", "baris-lewat-t-nol", points=0.5,
       title="Bentuk (vocab_size, d) dan (block_size, d); baris grad_pos setelah T bernilai nol")
def backward_shapes(g: Grader) -> None:
    grad_h = np.ones((2, 5))
    result = g.call("embed_backward", [0, 3], grad_h, 6, 8, public=True)
    if not isinstance(result, tuple) or len(result) != 2:
        raise CheckFailed("`embed_backward` harus mengembalikan tuple (grad_tok, grad_pos).")
    grad_tok, grad_pos = result
    expected_pos = np.zeros((8, 5))
    expected_pos[:2] = 1.0
    assert_close(grad_pos, expected_pos, "grad_pos untuk T = 2, block_size = 8")
    expected_tok = np.zeros((6, 5))
    expected_tok[[0, 3]] = 1.0
    assert_close(grad_tok, expected_tok, "grad_tok untuk ids = [0, 3], vocab_size = 6")

"""Checks for 01_embedding: embed, one_hot, embed_backward."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, assert_close, check, require_shape

from . import strategies as s
from .cases import cases

NOTEBOOK = "01_embedding"


# -- embed (3 points) -------------------------------------------------------------------------
@check(
    "embed", "contoh-bab", points=0.75, clause="K1", title="Contoh dari bab: ids = [2, 0, 2] dan [1, 1, 1, 1]"
)
def embed_chapter(g: Grader) -> None:
    for case in cases("embed"):
        g.expect("embed", *case.args)


@check(
    "embed",
    "acak",
    points=1.0,
    clause="K2",
    title="ids (list atau array) dan tabel acak dibandingkan dengan solusi referensi",
)
def embed_random(g: Grader) -> None:
    g.for_all(s.embed_inputs, 25, lambda ex: g.expect("embed", *ex))


@check("embed", "ids-kosong", points=0.25, clause="K3", title="ids kosong (T = 0) menghasilkan bentuk (0, d)")
def embed_empty(g: Grader) -> None:
    rng = np.random.default_rng(1)
    tok, pos = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    g.expect("embed", [], tok, pos)
    g.expect("embed", np.zeros(0, dtype=np.int64), tok, pos)


@check(
    "embed",
    "tabel-int",
    points=0.25,
    clause="K2",
    title="ids berupa array int dan tabel berisi bilangan bulat",
)
def embed_int_tables(g: Grader) -> None:
    tok = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int64)
    pos = np.array([[0, 0], [1, 1], [2, 2]], dtype=np.int64)
    g.expect("embed", np.array([2, 0], dtype=np.int64), tok, pos)


@check(
    "embed",
    "batas-block-size",
    points=0.5,
    clause="K4",
    title="T = block_size masih boleh; ValueError jika T > block_size",
)
def embed_too_long(g: Grader) -> None:
    rng = np.random.default_rng(1)
    tok, pos = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    g.expect("embed", [4, 0, 4, 1], tok, pos)
    g.expect_raises("embed", "ValueError", [0, 1, 2], np.eye(3), np.zeros((2, 3)))
    g.for_all(s.embed_too_long_inputs, 5, lambda ex: g.expect_raises("embed", "ValueError", *ex))


@check(
    "embed",
    "posisi-membedakan",
    points=0.25,
    clause="K1",
    title="Token sama di posisi berbeda: selisihnya = selisih pos_table",
)
def embed_same_token(g: Grader) -> None:
    rng = np.random.default_rng(2)
    tok, pos = rng.normal(size=(4, 5)), rng.normal(size=(6, 5))
    out = require_shape(
        g.call("embed", [1, 1, 1, 1, 1, 1], tok, pos),
        (6, 5),
        "keluaran `embed([1, 1, 1, 1, 1, 1], tok (4, 5), pos (6, 5))`",
    )
    assert_close(
        out - out[0],
        pos - pos[0],
        "selisih baris keluaran untuk token yang sama",
        inputs="embed([1, 1, 1, 1, 1, 1], tok (4, 5), pos (6, 5))",
    )


# -- one_hot (1 point) ------------------------------------------------------------------------
@check("one_hot", "contoh", points=0.25, clause="K1", title="Contoh kecil: ids = [2, 0, 2], vocab_size = 3")
def one_hot_example(g: Grader) -> None:
    for case in cases("one_hot"):
        g.expect("one_hot", *case.args)


@check(
    "one_hot",
    "acak",
    points=0.25,
    clause="K2",
    title="ids acak (list atau array) dibandingkan dengan referensi",
)
def one_hot_random(g: Grader) -> None:
    g.for_all(s.one_hot_inputs, 20, lambda ex: g.expect("one_hot", *ex))


@check(
    "one_hot",
    "ids-kosong",
    points=0.25,
    clause="K3",
    title="ids kosong (T = 0) menghasilkan bentuk (0, vocab_size)",
)
def one_hot_empty(g: Grader) -> None:
    g.expect("one_hot", [], 4)
    g.expect("one_hot", np.zeros(0, dtype=np.int64), 2)


@check("one_hot", "lookup", points=0.25, clause="K1", title="one_hot(ids) @ tabel sama dengan tabel[ids]")
def one_hot_is_lookup(g: Grader) -> None:
    table = np.random.default_rng(3).normal(size=(7, 4))
    ids = [6, 0, 3, 3, 1]
    one_hot = require_shape(g.call("one_hot", ids, 7), (5, 7), "keluaran `one_hot([6, 0, 3, 3, 1], 7)`")
    assert_close(
        one_hot @ table,
        table[ids],
        "one_hot(ids, 7) @ tabel (harus sama dengan tabel[ids])",
        inputs="one_hot([6, 0, 3, 3, 1], 7)",
    )


# -- embed_backward (3 points) ----------------------------------------------------------------
@check(
    "embed_backward", "contoh-bab", points=0.75, clause="K1", title="Contoh: ids = [2, 0, 2] dan [1, 1, 1, 1]"
)
def backward_example(g: Grader) -> None:
    for case in cases("embed_backward"):
        g.expect("embed_backward", *case.args)


@check(
    "embed_backward",
    "acak",
    points=0.75,
    clause="K3",
    title="ids (list atau array) dan grad_h acak dibandingkan dengan solusi referensi",
)
def backward_random(g: Grader) -> None:
    g.for_all(s.embed_backward_inputs, 25, lambda ex: g.expect("embed_backward", *ex))


@check(
    "embed_backward", "ids-kosong", points=0.25, clause="K4", title="ids kosong (T = 0): kedua gradien nol"
)
def backward_empty(g: Grader) -> None:
    g.expect("embed_backward", [], np.zeros((0, 3)), 5, 4)


@check(
    "embed_backward",
    "akumulasi-id-berulang",
    points=0.75,
    clause="K1",
    title="Token yang muncul berkali-kali menjumlahkan semua gradiennya",
)
def backward_accumulates(g: Grader) -> None:
    grad_h = np.arange(12, dtype=float).reshape(4, 3)
    g.expect("embed_backward", [1, 1, 1, 1], grad_h, 3, 4)
    g.expect(
        "embed_backward", np.array([0, 3, 3, 5, 3, 0, 1]), np.arange(21, dtype=float).reshape(7, 3), 6, 8
    )


@check(
    "embed_backward",
    "bentuk",
    points=0.5,
    clause="K2",
    title="Tuple (grad_tok, grad_pos) berbentuk (vocab_size, d) dan (block_size, d)",
)
def backward_shapes(g: Grader) -> None:
    shown = "embed_backward([0, 3], grad_h = satu (2, 5), 6, 8)"
    result = g.call("embed_backward", [0, 3], np.ones((2, 5)), 6, 8)
    if not isinstance(result, tuple) or len(result) != 2:
        raise CheckFailed(
            f"`embed_backward` harus mengembalikan tuple (grad_tok, grad_pos) untuk input {shown}.",
            input=shown,
            expected="tuple (grad_tok, grad_pos)",
            obtained=type(result).__name__,
        )
    require_shape(result[0], (6, 5), f"grad_tok untuk input {shown}")
    require_shape(result[1], (8, 5), f"grad_pos untuk input {shown}")

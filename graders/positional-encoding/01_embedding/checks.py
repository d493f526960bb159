"""Checks for 01_embedding: embed, one_hot, embed_backward."""

from __future__ import annotations

import numpy as np

from pe_course.engine import Grader, InputClass, case_runner, check, graded, other_values

from .._shared import properties as p
from . import strategies as s

run_cases = case_runner(__file__)  # cases/<function>.json beside this file


def _as_array(ids):
    return np.asarray(ids, dtype=np.int64)


def _one_id(ids):
    return [0] if isinstance(ids, list) else np.zeros(1, dtype=np.asarray(ids).dtype)


def _next_ids(ids, vocab_size: int):
    """Every id one further (modulo ``vocab_size``), as the same kind of sequence."""
    moved = (np.asarray(ids, dtype=np.int64) + 1) % max(vocab_size, 1)
    return moved.tolist() if isinstance(ids, list) else moved.astype(np.asarray(ids).dtype)


def _int_table(table) -> bool:
    return np.asarray(table).dtype.kind in "iu"


# -- embed (3 points) -------------------------------------------------------------------------
EMBED = graded(
    "embed",
    InputClass("K4", "T > block_size", lambda ids, tok_table, pos_table: len(ids) > len(pos_table)),
    InputClass(
        "K4",
        "T = block_size",
        lambda ids, tok_table, pos_table: 0 < len(ids) == len(pos_table),
        twin=lambda ids, tok_table, pos_table: {"pos_table": np.vstack([pos_table, pos_table[-1:]])},
        same_expected=True,
    ),
    InputClass(
        "K3",
        "ids kosong (T = 0)",
        lambda ids, **_: len(ids) == 0,
        twin=lambda ids, **_: {"ids": _one_id(ids)},
    ),
    InputClass(
        "K2",
        "ids berupa list Python",
        lambda ids, **_: isinstance(ids, list),
        twin=lambda ids, **_: {"ids": _as_array(ids)},
        same_expected=True,
    ),
    InputClass(
        "K2",
        "tabel berisi bilangan bulat",
        lambda ids, tok_table, pos_table: _int_table(tok_table) or _int_table(pos_table),
        twin=lambda ids, tok_table, pos_table: {
            "tok_table": np.asarray(tok_table, dtype=float),
            "pos_table": np.asarray(pos_table, dtype=float),
        },
        same_expected=True,
    ),
    raises=("K4", "ValueError"),
    probe=lambda ids, tok_table, pos_table: {
        "tok_table": other_values(tok_table),
        "pos_table": other_values(pos_table),
    },
    must_draw={
        "tok_table berisi int, pos_table float": lambda ids, tok_table, pos_table: (
            _int_table(tok_table) and not _int_table(pos_table)
        ),
        "pos_table berisi int, tok_table float": lambda ids, tok_table, pos_table: (
            _int_table(pos_table) and not _int_table(tok_table)
        ),
        "ids berupa list dengan T = block_size": lambda ids, tok_table, pos_table: (
            isinstance(ids, list) and len(ids) == len(pos_table)
        ),
    },
)


@check("embed", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def embed_cases(g: Grader) -> None:
    run_cases(g, "embed")


@check(
    "embed",
    "acak",
    clause="K2",
    title="ids (list atau array), tabel float atau int, 1 <= T <= block_size, dibandingkan dengan referensi",
)
def embed_random(g: Grader) -> None:
    g.for_all(s.embed_inputs, 30, lambda ex: g.expect("embed", *ex))


@check("embed", "ids-kosong", clause="K3", title="ids kosong (T = 0) menghasilkan bentuk (0, d)")
def embed_empty(g: Grader) -> None:
    rng = np.random.default_rng(1)
    tok, pos = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    g.expect("embed", [], tok, pos)
    g.expect("embed", np.zeros(0, dtype=np.int64), tok, pos)
    g.expect("embed", [], np.arange(6).reshape(3, 2), pos[:, :2])


@check(
    "embed",
    "batas-block-size",
    clause="K4",
    title="T = block_size masih boleh; ValueError tepat jika T > block_size",
)
def embed_block_size(g: Grader) -> None:
    rng = np.random.default_rng(1)
    tok, pos = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    g.expect("embed", np.array([4, 0, 4, 1]), tok, pos)
    g.expect("embed", [2], tok, pos[:1])
    g.expect_raises("embed", "ValueError", [0, 1, 2], np.eye(3), np.zeros((2, 3)))
    g.for_all(s.embed_too_long_inputs, 5, lambda ex: g.expect_raises("embed", "ValueError", *ex))
    g.expect_no_error("embed", "ValueError", np.array([1, 3]), tok, pos)


@check(
    "embed",
    "posisi-membedakan",
    clause="K1",
    title="Token sama di setiap posisi: selisih barisnya = selisih baris pos_table",
    public=(
        p.embed_same_token_differs_by_position,
        [(1, np.arange(6.0).reshape(3, 2), np.arange(10.0).reshape(5, 2) / 10)],
    ),
)
def embed_same_token(g: Grader) -> None:
    g.for_all(s.same_token_inputs, 10, lambda ex: p.embed_same_token_differs_by_position(g, *ex))


# -- one_hot (1 point) ------------------------------------------------------------------------
ONE_HOT = graded(
    "one_hot",
    InputClass(
        "K3",
        "ids kosong (T = 0)",
        lambda ids, **_: len(ids) == 0,
        twin=lambda ids, **_: {"ids": _one_id(ids)},
    ),
    InputClass(
        "K2",
        "ids berupa list Python",
        lambda ids, **_: isinstance(ids, list),
        twin=lambda ids, **_: {"ids": _as_array(ids)},
        same_expected=True,
    ),
    probe=lambda ids, vocab_size: {"ids": _next_ids(ids, vocab_size)},
)


@check("one_hot", "kasus", clause="K1", title="Contoh dan kasus untuk setiap ketentuan")
def one_hot_cases(g: Grader) -> None:
    run_cases(g, "one_hot")


@check("one_hot", "acak", clause="K2", title="ids acak (list atau array) dibandingkan dengan referensi")
def one_hot_random(g: Grader) -> None:
    g.for_all(s.one_hot_inputs, 20, lambda ex: g.expect("one_hot", *ex))


@check("one_hot", "ids-kosong", clause="K3", title="ids kosong (T = 0) menghasilkan bentuk (0, vocab_size)")
def one_hot_empty(g: Grader) -> None:
    g.expect("one_hot", [], 4)
    g.expect("one_hot", [], 9)
    g.expect("one_hot", np.zeros(0, dtype=np.int64), 2)
    g.expect("one_hot", np.zeros(0, dtype=np.int64), 6)


@check(
    "one_hot",
    "lookup",
    clause="K1",
    title="one_hot(ids) @ tabel sama dengan tabel[ids]",
    public=(p.one_hot_times_table_is_lookup, [(np.array([3, 0, 3, 1]), np.arange(8.0).reshape(4, 2))]),
)
def one_hot_is_lookup(g: Grader) -> None:
    g.for_all(s.lookup_inputs, 10, lambda ex: p.one_hot_times_table_is_lookup(g, *ex))


# -- embed_backward (3 points) ----------------------------------------------------------------
EMBED_BACKWARD = graded(
    "embed_backward",
    InputClass(
        "K4",
        "ids kosong (T = 0)",
        lambda ids, **_: len(ids) == 0,
        twin=lambda ids, grad_h, **_: {"ids": _one_id(ids), "grad_h": np.zeros((1, grad_h.shape[1]))},
    ),
    InputClass(
        "K3",
        "T = block_size",
        lambda ids, block_size, **_: 0 < len(ids) == block_size,
        twin=lambda ids, block_size, **_: {"block_size": block_size + 1},
    ),
    InputClass(
        "K3",
        "ids berupa list Python",
        lambda ids, **_: isinstance(ids, list),
        twin=lambda ids, **_: {"ids": _as_array(ids)},
        same_expected=True,
    ),
    form="K2",
    form_shape=True,
    probe=lambda grad_h, **_: {"grad_h": other_values(grad_h)},
)


@check("embed_backward", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def backward_cases(g: Grader) -> None:
    run_cases(g, "embed_backward")


@check(
    "embed_backward",
    "acak",
    clause="K3",
    title="ids (list atau array) dan grad_h acak, 1 <= T <= block_size, dibandingkan dengan referensi",
)
def backward_random(g: Grader) -> None:
    g.for_all(s.embed_backward_inputs, 25, lambda ex: g.expect("embed_backward", *ex))


@check("embed_backward", "ids-kosong", clause="K4", title="ids kosong (T = 0): kedua gradien nol")
def backward_empty(g: Grader) -> None:
    g.expect("embed_backward", [], np.zeros((0, 3)), 5, 4)
    g.expect("embed_backward", np.zeros(0, dtype=np.int64), np.zeros((0, 2)), 1, 1)


@check(
    "embed_backward",
    "akumulasi-id-berulang",
    clause="K1",
    title="Token yang muncul berkali-kali menjumlahkan semua gradiennya",
    public=(p.backward_sums_repeated_ids, [(np.array([1, 1, 0, 1]), np.arange(8.0).reshape(4, 2), 2, 5)]),
)
def backward_accumulates(g: Grader) -> None:
    g.for_all(s.repeated_ids_inputs, 10, lambda ex: p.backward_sums_repeated_ids(g, *ex))


@check(
    "embed_backward",
    "bentuk",
    clause="K2",
    title="Tuple (grad_tok, grad_pos) berupa np.ndarray berbentuk (vocab_size, d) dan (block_size, d)",
)
def backward_shapes(g: Grader) -> None:
    g.expect("embed_backward", np.array([0, 3]), np.ones((2, 5)), 6, 8)
    g.expect("embed_backward", np.array([1, 1]), np.ones((2, 1)), 4, 3)

"""Checks for 04_similarity: position_similarity, offset_similarity, self_attention."""

from __future__ import annotations

import numpy as np

from pe_course.build import pe_tables
from pe_course.engine import Grader, InputClass, case_runner, check, graded, other_values

from .._shared import properties as p
from .._shared.strategies import base_kwargs
from . import strategies as s

run_cases = case_runner(__file__)  # cases/<function>.json beside this file


def _pe_table(length: int, d_model: int) -> np.ndarray:
    """A sinusoidal PE table (base 10000), as data for the public properties: the same numbers on every
    machine (they are written into public_checks/, see pe_course.build.precision)."""
    return pe_tables.table(length, d_model)


def _pe_dots(table: np.ndarray, offsets: list[int]) -> list[tuple[int, list[tuple[int, float]]]]:
    """Per offset k, the pairs (p, PE(p)·PE(p + k)) of ``table`` at its first, a middle and its last
    start p: the data of the public property (which itself computes no number of the answer)."""
    length = len(table)
    dots = []
    for k in offsets:
        starts = range(max(0, -k), min(length, length - k))
        chosen = sorted({starts[0], starts[len(starts) // 2], starts[-1]})
        dots.append((k, [(p, float(table[p] @ table[p + k])) for p in chosen]))
    return dots


# -- position_similarity (2 points) -----------------------------------------------------------
def _squared_norms(pe) -> np.ndarray:
    pe = np.asarray(pe, dtype=np.float64)
    return np.sum(pe * pe, axis=1)


def _different_norms(pe) -> bool:
    n2 = _squared_norms(pe)
    return not np.allclose(n2, n2[0], rtol=1e-6, atol=0.0)


def _cosines(pe: np.ndarray, pos: int) -> np.ndarray:
    norms = np.sqrt(_squared_norms(pe))
    return pe @ pe[pos] / (norms * norms[pos])


def _one_norm(pe, pos) -> dict:
    """The nearest table whose rows all have one norm (sqrt(2) times the largest): every row
    lengthened by a component of its own, one new column per row, orthogonal to everything else.
    The dot products of different rows, and so the signs of the cosine similarities, stay as they
    were. When every other row is orthogonal to ``pe[pos]`` that would leave the result unchanged,
    so part of the added length is then one column shared by all rows.

    (Scaling the rows would keep the cosine similarity, but a function that forgets to divide by
    the norms would give other values on such a twin: one mistake would look like two.)"""
    pe = np.asarray(pe, dtype=np.float64)
    n2 = _squared_norms(pe)
    top = n2.max()
    twin = np.hstack([pe, np.diag(np.sqrt(2.0 * top - n2))])
    if np.max(np.abs(_cosines(twin, pos) - _cosines(pe, pos))) < 1e-3:
        shared = np.full((len(pe), 1), np.sqrt(0.5 * top))
        twin = np.hstack([pe, np.diag(np.sqrt(1.5 * top - n2)), shared])
    return {"pe": twin}


POSITION_SIMILARITY = graded(
    "position_similarity",
    InputClass(
        "K2",
        "tabel berisi bilangan bulat",
        lambda pe, pos: np.asarray(pe).dtype.kind in "iu",
        twin=lambda pe, pos: {"pe": np.asarray(pe, dtype=np.float64)},
        same_expected=True,
    ),
    InputClass(
        "K2",
        "baris berbeda panjang",
        lambda pe, pos: _different_norms(pe),
        twin=lambda pe, pos: _one_norm(pe, pos),
    ),
    # rows in another order: the same norms and dtype, other similarities
    probe=lambda pe, pos: {"pe": np.roll(np.asarray(pe), 1, axis=0)},
)


@check("position_similarity", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def similarity_cases(g: Grader) -> None:
    run_cases(g, "position_similarity")


@check(
    "position_similarity",
    "acak",
    clause="K2",
    title="Tabel acak (float atau int, baris sama atau berbeda panjang) dan pos acak, dibandingkan dengan referensi",
)
def similarity_random(g: Grader) -> None:
    g.for_all(s.similarity_inputs, 16, lambda ex: g.expect("position_similarity", *ex))


@check(
    "position_similarity",
    "tabel-pe-sinusoidal",
    clause="K1",
    title="Tabel PE sinusoidal (semua baris sama panjang) dengan beberapa pos",
)
def similarity_sinusoidal(g: Grader) -> None:
    for length, d_model, base, pos in [(50, 32, 10000.0, 10), (30, 12, 100.0, 7), (20, 6, 10000.0, 19)]:
        g.expect("position_similarity", g.ref("positional_encoding", length, d_model, base), pos)


@check(
    "position_similarity",
    "diri-sendiri-dan-simetri",
    clause="K1",
    title="sim[pos] = 1, semua nilai di [-1, 1], dan sim(p, q) = sim(q, p)",
    public=(
        p.similarity_self_and_symmetric,
        [(np.array([[3.0, 4.0], [4.0, 3.0], [5.0, 0.0], [0.0, -5.0]]), 1), (_pe_table(8, 6), 3)],
    ),
)
def similarity_properties(g: Grader) -> None:
    g.for_all(s.equal_norm_inputs, 10, lambda ex: p.similarity_self_and_symmetric(g, *ex))


# -- offset_similarity (2 points) -------------------------------------------------------------
def _largest_element(offset) -> dict:
    """The scalar twin of a 1-D offset: its element of largest magnitude, as a Python int."""
    flat = np.asarray(offset).ravel()
    return {"offset": int(flat[np.argmax(np.abs(flat))])}


OFFSET_SIMILARITY = graded(
    "offset_similarity",
    InputClass(
        "K3",
        "offset array kosong",
        lambda offset, d_model, base: np.ndim(offset) >= 1 and np.size(offset) == 0,
        twin=lambda offset, d_model, base: {"offset": np.zeros((1,) * np.ndim(offset), dtype=np.int64)},
    ),
    InputClass(
        "K3",
        "offset array 2-D atau lebih",
        lambda offset, d_model, base: np.ndim(offset) >= 2 and np.size(offset) > 0,
        twin=lambda offset, d_model, base: {"offset": np.asarray(offset).ravel()},
    ),
    InputClass(
        "K3",
        "offset array 1-D",
        lambda offset, d_model, base: np.ndim(offset) == 1 and np.size(offset) > 0,
        twin=lambda offset, d_model, base: _largest_element(offset),
    ),
    InputClass(
        "K4",
        "base diberikan",
        lambda offset, d_model, base: base != 10000.0,
        twin=lambda offset, d_model, base: {"base": 10000.0},
    ),
    form="K2",
    probe=lambda offset, **_: {"offset": offset + 1},
    must_draw={
        "offset array kosong": lambda offset, d_model, base: np.ndim(offset) >= 1 and np.size(offset) == 0,
        "base int": lambda offset, d_model, base: isinstance(base, int),
    },
)


@check("offset_similarity", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def offset_cases(g: Grader) -> None:
    run_cases(g, "offset_similarity")


@check(
    "offset_similarity",
    "acak",
    clause="K3",
    title="Offset skalar (int atau float) dan array 1-D, 2-D, 3-D, d_model dan base acak, dibandingkan dengan referensi",
)
def offset_random(g: Grader) -> None:
    g.for_all(
        s.offset_inputs,
        18,
        lambda ex: g.expect("offset_similarity", ex[0], ex[1], atol=1e-6, **base_kwargs(ex[2])),
    )


@check(
    "offset_similarity",
    "jenis-hasil",
    clause="K2",
    title="Offset skalar menghasilkan float Python, offset array menghasilkan np.ndarray",
)
def offset_result_kind(g: Grader) -> None:
    for offset, d_model in [(-2.5, 8), (np.array([[1, -2], [3, 40]]), 6)]:
        g.expect("offset_similarity", offset, d_model, atol=1e-6)


@check(
    "offset_similarity", "base", clause="K4", title="base diberikan, sebagai argumen posisi atau kata kunci"
)
def offset_base(g: Grader) -> None:
    g.expect("offset_similarity", -1.5, 4, base=20.0, atol=1e-6)
    # the Gram matrix of a PE table with base 100: offsets p - q
    positions = np.arange(12)
    g.expect("offset_similarity", positions[:, None] - positions[None, :], 10, 100.0, atol=1e-6)


@check(
    "offset_similarity",
    "titik-pe",
    clause="K1",
    title="Sama dengan PE(p)·PE(p + k) dari tabel PE sinusoidal, untuk p berapa pun",
    public=(p.offset_equals_pe_dot, [(8, _pe_dots(_pe_table(20, 8), [1, 3, -2]))]),
)
def offset_matches_dot(g: Grader) -> None:
    p.offset_equals_pe_dot(g, 16, _pe_dots(g.ref("positional_encoding", 120, 16), [5, -7, 59]))


@check(
    "offset_similarity",
    "per-elemen",
    clause="K3",
    title="Offset array 3-D: hasil berbentuk sama, dihitung per elemen",
)
def offset_elementwise(g: Grader) -> None:
    g.expect("offset_similarity", np.array([[[7], [-3]], [[0], [25]]]), 10, atol=1e-6)


# -- self_attention (3 points) ----------------------------------------------------------------
ORDINARY_SCORE = 100.0  # the largest score of an ordinary input (K1); larger scores are K2's
TWIN_SCORE = 10.0  # the largest score of a large input's twin: the same x, scaled down


SELF_ATTENTION = graded(
    "self_attention",
    InputClass(
        "K2",
        "skor besar (di atas 100)",
        lambda x: s.attention_max_score(x) > ORDINARY_SCORE,
        twin=lambda x: {"x": np.asarray(x) * np.sqrt(TWIN_SCORE / s.attention_max_score(x))},
    ),
    probe=lambda x: {"x": other_values(x)},
)


@check("self_attention", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def attention_cases(g: Grader) -> None:
    run_cases(g, "self_attention")


@check("self_attention", "acak", clause="K1", title="x acak (T, d) dibandingkan dengan solusi referensi")
def attention_random(g: Grader) -> None:
    g.for_all(s.attention_inputs, 16, lambda x: g.expect("self_attention", x))


@check(
    "self_attention",
    "skor-besar",
    clause="K2",
    title="Skor besar (150 sampai 700, dan sekitar 709 dengan jumlah exp satu baris tak hingga)",
)
def attention_large(g: Grader) -> None:
    g.for_all(s.large_attention_inputs, 8, lambda x: g.expect("self_attention", x))


@check(
    "self_attention",
    "ekuivarian-permutasi",
    clause="K1",
    title="Tanpa posisi: self_attention(x[perm]) = self_attention(x)[perm]",
    public=(
        p.attention_permutation_equivariant,
        [(np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0], [0.0, 0.0, 2.0], [1.0, 1.0, 1.0]]), [2, 0, 3, 1])],
    ),
)
def attention_permutation(g: Grader) -> None:
    g.for_all(s.attention_permutation_inputs, 10, lambda ex: p.attention_permutation_equivariant(g, *ex))


@check("self_attention", "tepi", clause="K1", title="Kasus tepi: satu token (T = 1), d = 1 dan input nol")
def attention_edges(g: Grader) -> None:
    for x in (
        np.array([[4.0, -2.5, 1.0, 3.0]]),
        np.array([[1.5], [-0.5], [2.0], [0.25]]),
        np.zeros((2, 5)),
    ):
        g.expect("self_attention", x)

"""Checks for 03_rotation: rotation_matrix, shift_encoding (apply_rope and rope_scores: ``checks_rope.py``)."""

from __future__ import annotations

import numpy as np

from pe_course.build import pe_tables
from pe_course.engine import Grader, InputClass, builds_on, case_runner, check, graded, other_values

from .._shared import properties as p
from .._shared.strategies import base_kwargs
from . import strategies as s

run_cases = case_runner(__file__)  # cases/<function>.json beside this file
DEFAULT_BASE = 10000.0


def _pe_rows(length: int, d_model: int) -> np.ndarray:
    """Rows 0 .. length-1 of the sinusoidal PE table (base 10000): public inputs of the properties,
    the same numbers on every machine (they are written into public_checks/, see pe_course.build.precision)."""
    return pe_tables.table(length, d_model, DEFAULT_BASE)


def _base_matters(base, width: int, turned: bool) -> bool:
    """``base`` given, and the result depends on it: with d = 2 the only frequency is 1 for any base,
    and nothing turned (k = 0, every position 0) is the same for any base; such an input is no input
    of the ``base`` clause (its twin with the default base would have the same result)."""
    return base != DEFAULT_BASE and width >= 4 and width % 2 == 0 and turned


def _even(width: int) -> bool:
    """An odd width must raise whatever k, the positions or base are: such an input belongs to no class
    of those clauses (a k = 0 twin with k = 1 raising as it should would take the failure of an early
    return for k = 0 away from the ValueError clause). It does belong to the classes of how the input
    is given (one row, int entries, a list of positions), whose twins raise too: a failure only there
    is that clause's."""
    return width % 2 == 0


def _default_base(**_) -> dict:
    return {"base": DEFAULT_BASE}


def _no_error_everywhere(g: Grader, fn: str, valid: list[tuple[tuple, dict]]) -> None:
    """The ValueError clause is not met by code that raises ValueError for every input: charged when
    every one of these valid inputs raises it (one valid input raising it by accident, e.g. from a
    broadcasting mistake, is that input's own clause's failure)."""
    if all(g.outcome(fn, *args, **kwargs).error == "ValueError" for args, kwargs in valid):
        args, kwargs = valid[0]
        g.expect_no_error(fn, "ValueError", *args, **kwargs)


# -- rotation_matrix (1 point) ----------------------------------------------------------------
ROTATION = graded("rotation_matrix", probe=lambda theta: {"theta": theta + 1.0})


@check("rotation_matrix", "kasus", clause="K1", title="Contoh dari bab dan sudut nol, negatif, lebih dari 2π")
def rotation_cases(g: Grader) -> None:
    run_cases(g, "rotation_matrix")


@check("rotation_matrix", "acak", clause="K1", title="Sudut acak dibandingkan dengan solusi referensi")
def rotation_random(g: Grader) -> None:
    g.for_all(s.rotation_angles, 20, lambda theta: g.expect("rotation_matrix", theta))


@check(
    "rotation_matrix",
    "ortogonal",
    clause="K1",
    title="M(theta) ortogonal: M Mᵀ = I dan det M = 1",
    public=(p.rotation_is_orthogonal, [(0.3,), (-1.2,), (10.0,)]),
)
def rotation_orthogonal(g: Grader) -> None:
    g.for_all(s.rotation_angles, 10, lambda theta: p.rotation_is_orthogonal(g, theta))


@check(
    "rotation_matrix",
    "memutar-sin-cos",
    clause="K1",
    title="M(theta) memetakan (sin a, cos a) ke (sin(a + theta), cos(a + theta))",
    public=(p.rotation_turns_sin_cos_pair, [(0.7, 0.3), (1.1, -1.2)]),
)
def rotation_turns_pair(g: Grader) -> None:
    g.for_all(s.angle_pairs, 15, lambda ex: p.rotation_turns_sin_cos_pair(g, *ex))


# -- shift_encoding (3 points) ----------------------------------------------------------------
# Ordinary input (K1): a float table pe (T, d_model) with even d_model, k > 0, the default base.
SHIFT = graded(
    "shift_encoding",
    InputClass("K4", "d_model ganjil", lambda pe, **_: np.shape(pe)[-1] % 2 == 1),
    InputClass(
        "K3", "k = 0", lambda pe, k, **_: _even(np.shape(pe)[-1]) and k == 0, twin=lambda **_: {"k": 1}
    ),
    InputClass(
        "K3", "k negatif", lambda pe, k, **_: _even(np.shape(pe)[-1]) and k < 0, twin=lambda k, **_: {"k": -k}
    ),
    InputClass(
        "K2",
        "pe berisi bilangan bulat",
        lambda pe, **_: np.asarray(pe).dtype.kind in "iu",
        twin=lambda pe, **_: {"pe": np.asarray(pe, dtype=np.float64)},
        same_expected=True,
    ),
    InputClass(
        "K2",
        "pe satu baris (d_model,)",
        lambda pe, **_: np.ndim(pe) == 1,
        twin=lambda pe, **_: {"pe": np.asarray(pe)[None, :]},
    ),
    InputClass(
        "K3",
        "base diberikan",
        lambda pe, k, base: _base_matters(base, np.shape(pe)[-1], k != 0),
        twin=_default_base,
    ),
    raises=("K4", "ValueError"),
    probe=lambda pe, **_: {"pe": other_values(pe)},
)


@builds_on("shift_encoding", "rotation_matrix")
def shift_from_rotations(rotation_matrix, pe, k, base=10000.0):
    """shift_encoding as the rotation property reads: pair i of each row times M(omega_i k)."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2 != 0:
        raise ValueError("d_model ganjil")
    out = np.empty_like(pe)
    for i, omega in enumerate(base ** (-np.arange(0, d_model, 2) / d_model)):
        m = np.asarray(rotation_matrix(omega * k), dtype=float)
        if m.shape != (2, 2):
            raise ValueError("rotation_matrix memberi bentuk yang tidak bisa dipakai")
        out[..., 2 * i : 2 * i + 2] = pe[..., 2 * i : 2 * i + 2] @ m.T
    return out


@check("shift_encoding", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def shift_cases(g: Grader) -> None:
    run_cases(g, "shift_encoding")


@check(
    "shift_encoding",
    "pe-tergeser",
    clause="K1",
    title="shift_encoding(PE[a:b], k) = PE[a+k:b+k] untuk tabel PE (k > 0)",
    public=(p.shift_moves_pe_rows, [(_pe_rows(8, 8), 5, 3), (_pe_rows(13, 6), 3, 10)]),
)
def shift_matches_pe(g: Grader) -> None:
    def body(example) -> None:
        d_model, start, count, k = example
        table = g.ref("positional_encoding", start + count + k, d_model)[start:]
        p.shift_moves_pe_rows(g, table, count, k)

    g.for_all(s.pe_shift_inputs, 15, body)


@check(
    "shift_encoding",
    "menjaga-norma",
    clause="K1",
    title="Rotasi menjaga norma tiap baris",
    public=(p.shift_keeps_norms, [(np.array([[3.0, -4.0, 0.5, 1.5], [-2.0, 1.0, 2.5, -0.5]]), 9)]),
)
def shift_keeps_norm(g: Grader) -> None:
    g.for_all(s.shift_ordinary_inputs, 10, lambda ex: p.shift_keeps_norms(g, *ex))


@check(
    "shift_encoding",
    "acak",
    clause="K2",
    title="pe satu baris atau tabel, float atau int; k positif, nol atau negatif; base bawaan atau "
    "lainnya; dibandingkan dengan referensi",
)
def shift_random(g: Grader) -> None:
    g.for_all(s.shift_inputs, 25, lambda ex: g.expect("shift_encoding", ex[0], ex[1], **base_kwargs(ex[2])))


@check(
    "shift_encoding",
    "k-nol-negatif-base",
    clause="K3",
    title="k = 0 mengembalikan pe; k negatif menggeser mundur (k lalu -k kembali ke pe); base selain 10000",
)
def shift_zero_negative_base(g: Grader) -> None:
    rows = np.array([[0.5, -1.0, 2.0, 0.25, -1.5, 0.75], [1.5, 0.75, -0.5, 1.0, 2.0, -2.5]])
    there = g.expect("shift_encoding", rows, 11)
    if there is not None:
        g.expect("shift_encoding", np.asarray(there, dtype=float), -11)
    g.expect("shift_encoding", rows, 0)
    g.expect("shift_encoding", rows[1], -40)
    g.expect("shift_encoding", rows, 6, base=20.0)
    g.expect("shift_encoding", rows[:1], -9, base=3e4)


@check(
    "shift_encoding",
    "d-ganjil",
    clause="K4",
    title="ValueError untuk d_model ganjil (juga untuk k = 0), tidak untuk d_model genap",
)
def shift_odd(g: Grader) -> None:
    g.for_all(
        s.shift_odd_inputs,
        8,
        lambda ex: g.expect_raises("shift_encoding", "ValueError", *ex[:2], **base_kwargs(ex[2])),
    )
    _no_error_everywhere(
        g,
        "shift_encoding",
        [
            ((np.array([[0.5, -1.0, 2.0, 0.25]]), 3), {}),
            ((np.array([0.8, 0.6]), 2), {}),
            ((np.eye(2), 1), {}),
        ],
    )

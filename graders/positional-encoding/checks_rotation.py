"""Checks for 03_rotation: rotation_matrix, shift_encoding, apply_rope, rope_scores."""

from __future__ import annotations

import numpy as np

from pe_course import pe_tables
from pe_course.checks import Grader, InputClass, builds_on, check, graded, other_values

from . import properties as p
from . import strategies as s
from .cases import run_cases

NOTEBOOK = "03_rotation"
DEFAULT_BASE = 10000.0


def _pe_rows(length: int, d_model: int) -> np.ndarray:
    """Rows 0 .. length-1 of the sinusoidal PE table (base 10000): public inputs of the properties,
    the same numbers on every machine (they are written into public_checks/, see pe_course.precision)."""
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
    g.for_all(s.shift_inputs, 25, lambda ex: g.expect("shift_encoding", ex[0], ex[1], **s.base_kwargs(ex[2])))


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
        lambda ex: g.expect_raises("shift_encoding", "ValueError", *ex[:2], **s.base_kwargs(ex[2])),
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


# -- apply_rope (3 points) --------------------------------------------------------------------
# Ordinary input (K1): x (T, d) float with even d, positions not given (0 .. T-1), the default base.
def _values(positions) -> np.ndarray:
    return np.asarray(positions, dtype=np.float64).reshape(-1)


def _like(positions, values: np.ndarray):
    """``values`` in the container ``positions`` came in (a list stays a list)."""
    if isinstance(positions, list):
        return [
            float(v) if isinstance(p0, float) else int(v) for p0, v in zip(positions, values, strict=True)
        ]
    return values.astype(np.asarray(positions).dtype)


def _fractional(positions) -> bool:
    return positions is not None and bool(np.any(_values(positions) != np.round(_values(positions))))


def _turned(x, positions) -> bool:
    """Some row is rotated: a position other than 0."""
    return len(x) > 1 if positions is None else bool(np.any(_values(positions) != 0))


def _away_from_zero(values: np.ndarray) -> np.ndarray:
    """Fractional positions rounded away from 0 (0.5 -> 1, -0.25 -> -1): integers, none of them a
    fractional position turned into 0, where no rotation shows."""
    return np.sign(values) * np.ceil(np.abs(values))


def _negative(positions) -> bool:
    return positions is not None and bool(np.any(_values(positions) < 0))


def _counting(x, positions) -> bool:
    """positions given as exactly 0, 1, ..., T-1 (what None means)."""
    v = _values(positions)
    return v.shape == (len(x),) and bool(np.all(v == np.arange(len(x))))


def _placed(x, positions) -> dict:
    """The nearest input with default positions: each row of x placed at the row its position names
    (non-negative integers), the other rows ones; the reference rotates those rows the same way."""
    at = _values(positions).astype(np.int64)
    rows = np.ones((int(at.max()) + 1, np.shape(x)[1]))
    rows[at] = x
    return {"x": rows, "positions": None}


ROPE = graded(
    "apply_rope",
    InputClass("K4", "d ganjil", lambda x, **_: np.shape(x)[1] % 2 == 1),
    InputClass(
        "K2",
        "positions berupa list Python",
        lambda positions, **_: isinstance(positions, list),
        twin=lambda positions, **_: {"positions": np.asarray(positions)},
        same_expected=True,
    ),
    InputClass(
        "K2",
        "positions pecahan",
        lambda positions, **_: _fractional(positions),
        twin=lambda positions, **_: {"positions": _like(positions, _away_from_zero(_values(positions)))},
    ),
    InputClass(
        "K2",
        "positions negatif",
        lambda positions, **_: _negative(positions),
        twin=lambda positions, **_: {"positions": _like(positions, np.abs(_values(positions)))},
    ),
    InputClass(
        "K2",
        "positions = 0, 1, ..., T-1 diberikan",
        lambda x, positions, **_: positions is not None and _counting(x, positions),
        twin=lambda **_: {"positions": None},
        same_expected=True,
    ),
    InputClass(
        "K2",
        "positions diberikan",
        lambda x, positions, **_: (
            positions is not None
            and not (_fractional(positions) or _negative(positions) or _counting(x, positions))
        ),
        twin=lambda x, positions, **_: _placed(x, positions),
    ),
    InputClass(
        "K3",
        "base diberikan",
        lambda x, positions, base: _base_matters(base, np.shape(x)[1], _turned(x, positions)),
        twin=_default_base,
    ),
    raises=("K4", "ValueError"),
    probe=lambda x, **_: {"x": other_values(x)},
)


@check("apply_rope", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def rope_cases(g: Grader) -> None:
    run_cases(g, "apply_rope")


@check(
    "apply_rope",
    "menjaga-norma",
    clause="K1",
    title="Rotasi menjaga norma tiap baris; baris di posisi 0 tidak diputar",
    public=(
        p.rope_keeps_norms,
        [(np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [3.0, 4.0, -1.0, 2.0]]),)],
    ),
)
def rope_norms(g: Grader) -> None:
    g.for_all(s.rope_ordinary_inputs, 10, lambda x: p.rope_keeps_norms(g, x))


@check(
    "apply_rope",
    "hanya-posisi-relatif",
    clause="K1",
    title="Menggeser semua posisi q dan k dengan konstanta c tidak mengubah skor q·k setelah RoPE",
)
def rope_relative(g: Grader) -> None:
    """Hidden only: its calls have positions given (K2's inputs), and the public check would charge a
    call there that gives no value to this check's clause."""

    def body(example) -> None:
        q, k, pos_q, pos_k, shift = example
        shown = (
            f"apply_rope(q {q.shape}, {pos_q.tolist()}) dan apply_rope(k {k.shape}, {pos_k.tolist()}), "
            f"lalu semua posisi + {shift}"
        )
        rq = g.array(g.call("apply_rope", q, pos_q), q.shape, "keluaran `apply_rope(q, pos_q)`")
        rk = g.array(g.call("apply_rope", k, pos_k), k.shape, "keluaran `apply_rope(k, pos_k)`")
        rq_c = g.array(g.call("apply_rope", q, pos_q + shift), q.shape, "keluaran `apply_rope(q, pos_q + c)`")
        rk_c = g.array(g.call("apply_rope", k, pos_k + shift), k.shape, "keluaran `apply_rope(k, pos_k + c)`")
        g.close(
            rq_c @ rk_c.T,
            rq @ rk.T,
            f"skor setelah menggeser semua posisi dengan c = {shift} (harus sama: skor RoPE hanya "
            "bergantung pada selisih posisi)",
            atol=1e-6,
            inputs=shown,
        )

    g.for_all(s.rope_relative_inputs, 10, body)


@check(
    "apply_rope",
    "posisi",
    clause="K2",
    title="x acak; positions bawaan, list atau array, negatif atau pecahan; base bawaan atau lainnya; "
    "dibandingkan dengan referensi",
)
def rope_random(g: Grader) -> None:
    def body(example) -> None:
        x, positions, base = example
        if positions is None:
            g.expect("apply_rope", x, **s.base_kwargs(base))
        else:
            g.expect("apply_rope", x, positions, **s.base_kwargs(base))

    g.for_all(s.rope_inputs, 25, body)


@check("apply_rope", "base", clause="K3", title="base selain 10000 dipakai untuk frekuensinya")
def rope_base(g: Grader) -> None:
    x = np.array([[0.5, -1.0, 2.0, 0.25, 1.5, -0.75], [1.0, 1.0, -2.0, 0.5, 0.25, 3.0]])
    g.expect("apply_rope", x, base=50.0)
    g.expect("apply_rope", x, np.array([7.0, -2.0]), base=1e5)


@check("apply_rope", "d-ganjil", clause="K4", title="ValueError untuk d ganjil, tidak untuk d genap")
def rope_odd(g: Grader) -> None:
    def body(example) -> None:
        x, positions, base = example
        if positions is None:
            g.expect_raises("apply_rope", "ValueError", x, **s.base_kwargs(base))
        else:
            g.expect_raises("apply_rope", "ValueError", x, positions, **s.base_kwargs(base))

    g.for_all(s.rope_odd_inputs, 8, body)
    _no_error_everywhere(
        g,
        "apply_rope",
        [
            ((np.array([[0.5, -1.0], [2.0, 0.25]]),), {}),
            ((np.array([[1.0, 2.0, 3.0, 4.0]]), [5]), {}),
            ((np.eye(4),), {}),
        ],
    )


# -- rope_scores (2 points) -------------------------------------------------------------------
# Ordinary input (K1): q and k float of the same shape (T, d), even d, the default base. An input is
# one of the base clause's only when both q and k have rows that turn (Tq, Tk >= 2): a mistake that
# leaves one side unrotated makes a result with one row at position 0 independent of base, and it
# would be charged there too.
SCORES = graded(
    "rope_scores",
    InputClass(
        "K2", "Tq ≠ Tk", lambda q, k, **_: len(q) != len(k), twin=lambda q, k, **_: _same_length(q, k)
    ),
    InputClass(
        "K3",
        "base diberikan",
        lambda q, k, base: _base_matters(base, np.shape(q)[1], min(len(q), len(k)) > 1),
        twin=_default_base,
    ),
    probe=lambda q, k, **_: {"q": other_values(q), "k": other_values(k)},
)


def _same_length(q, k) -> dict:
    """The nearest input with Tq = Tk: the shorter one's rows repeated up to the longer length (cutting
    both to the shorter length could leave one row at position 0, which no rotation changes)."""
    length = max(len(q), len(k))
    return {"q": q[np.arange(length) % len(q)], "k": k[np.arange(length) % len(k)]}


@builds_on("rope_scores", "apply_rope")
def scores_from_rope(apply_rope, q, k, base=10000.0):
    """rope_scores as the notebook asks: apply_rope(q) @ apply_rope(k).T with the same base."""
    rq = np.asarray(apply_rope(q, base=base), dtype=float)
    rk = np.asarray(apply_rope(k, base=base), dtype=float)
    if rq.shape != np.shape(q) or rk.shape != np.shape(k):
        raise ValueError("apply_rope memberi bentuk yang tidak bisa dipakai")
    return rq @ rk.T


@check("rope_scores", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def scores_cases(g: Grader) -> None:
    run_cases(g, "rope_scores")


@check(
    "rope_scores",
    "toeplitz",
    clause="K1",
    title="Isi sama di semua posisi: skor konstan sepanjang diagonal dan S[0, 0] = q · k",
    public=(
        p.scores_constant_along_diagonals,
        [(np.array([1.0, 2.0, 0.5, -1.0]), np.array([0.5, 1.0, 1.0, 1.0]), 4, 2.0)],  # v · w = 2
    ),
)
def scores_toeplitz(g: Grader) -> None:
    g.for_all(
        s.tiled_ordinary_inputs,
        10,
        lambda ex: p.scores_constant_along_diagonals(g, *ex, float(ex[0] @ ex[1])),
    )


@check(
    "rope_scores",
    "acak",
    clause="K2",
    title="q (Tq, d) dan k (Tk, d) acak, Tq sama atau berbeda dari Tk, base bawaan atau lainnya, "
    "dibandingkan dengan referensi",
)
def scores_random(g: Grader) -> None:
    g.for_all(
        s.rope_scores_inputs,
        20,
        lambda ex: g.expect("rope_scores", ex[0], ex[1], atol=1e-6, **s.base_kwargs(ex[2])),
    )


@check("rope_scores", "base", clause="K3", title="base selain 10000 dipakai untuk kedua rotasi")
def scores_base(g: Grader) -> None:
    q = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [1.0, 1.0, -2.0, 0.5]])
    g.expect("rope_scores", q, q[::-1], atol=1e-6, base=20.0)
    g.expect("rope_scores", q[:2], q, atol=1e-6, base=2e5)


@check(
    "rope_scores",
    "hanya-offset",
    clause="K1",
    title="Isi sama di semua posisi, Tq dan Tk sama atau berbeda, base bawaan atau lainnya: "
    "S[m, n] = q · R(n - m) k",
)
def scores_offset(g: Grader) -> None:
    g.for_all(
        s.tiled_rope_inputs,
        10,
        lambda ex: g.expect(
            "rope_scores",
            np.tile(ex[0], (ex[2], 1)),
            np.tile(ex[1], (ex[3], 1)),
            atol=1e-6,
            **s.base_kwargs(ex[4]),
        ),
    )

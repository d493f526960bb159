"""Checks for 03_rotation: apply_rope (rotation_matrix and shift_encoding: ``checks.py``; rope_scores: ``checks_scores.py``)."""

from __future__ import annotations

import numpy as np

from pe_course.engine import Grader, InputClass, case_runner, check, graded, other_values

from .._shared import properties as p
from .._shared.strategies import base_kwargs
from . import strategies as s
from .checks import _base_matters, _default_base, _no_error_everywhere

run_cases = case_runner(__file__)  # cases/<function>.json beside this file


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
            g.expect("apply_rope", x, **base_kwargs(base))
        else:
            g.expect("apply_rope", x, positions, **base_kwargs(base))

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
            g.expect_raises("apply_rope", "ValueError", x, **base_kwargs(base))
        else:
            g.expect_raises("apply_rope", "ValueError", x, positions, **base_kwargs(base))

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

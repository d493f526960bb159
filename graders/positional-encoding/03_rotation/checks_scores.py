"""Checks for 03_rotation: rope_scores (built on apply_rope: ``checks_rope.py``)."""

from __future__ import annotations

import numpy as np

from pe_course.engine import Grader, InputClass, builds_on, case_runner, check, graded, other_values

from .._shared import properties as p
from .._shared.strategies import base_kwargs
from . import strategies as s
from .checks import _base_matters, _default_base

run_cases = case_runner(__file__)  # cases/<function>.json beside this file


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
        lambda ex: g.expect("rope_scores", ex[0], ex[1], atol=1e-6, **base_kwargs(ex[2])),
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
            **base_kwargs(ex[4]),
        ),
    )

"""The contract domains of 03_rotation's graded functions (``@domain``; what a domain is and who
checks it: ``_shared/contracts.py``).
"""

from __future__ import annotations

import numpy as np

from pe_course.course.clauses import domain

from .._shared.contracts import base_problem, is_integer, is_matrix, is_real


@domain
def rotation_matrix(theta) -> str | None:
    return None if is_real(theta) else "theta harus bilangan real"


@domain
def shift_encoding(pe, k, base=10000.0) -> str | None:
    if not (
        isinstance(pe, np.ndarray)
        and pe.ndim in (1, 2)
        and pe.dtype.kind in "iuf"
        and np.all(np.isfinite(pe))
    ):
        return "pe harus array (d_model,) atau (T, d_model)"
    if pe.shape[-1] == 0:
        return "d_model harus positif"
    if not is_integer(k):
        return "k harus bilangan bulat"
    return base_problem(base)  # odd d_model is in the contract: ValueError


@domain
def apply_rope(x, positions=None, base=10000.0) -> str | None:
    if not is_matrix(x) or x.dtype.kind != "f":
        return "x harus array float (T, d)"  # an int x is outside the contract (K1: "array float")
    if positions is not None:
        values = np.asarray(positions) if isinstance(positions, (list, np.ndarray)) else None
        if values is None or values.shape != (x.shape[0],) or values.dtype.kind not in "iuf":
            return "positions harus list atau array panjang T"
        if not np.all(np.isfinite(values)):
            return "positions harus bilangan real"
    return base_problem(base)  # odd d is in the contract: ValueError


@domain
def rope_scores(q, k, base=10000.0) -> str | None:
    if not (is_matrix(q) and is_matrix(k)) or q.shape[1] != k.shape[1] or q.shape[1] % 2:
        return "q (Tq, d) dan k (Tk, d) harus matriks dengan d genap yang sama"
    return base_problem(base)

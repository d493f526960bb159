"""The contract domains of 04_similarity's graded functions (``@domain``; what a domain is and who
checks it: ``_shared/contracts.py``).
"""

from __future__ import annotations

import numpy as np

from pe_course.course.clauses import domain

from .._shared.contracts import base_problem, is_integer, is_matrix, is_real


@domain
def position_similarity(pe, pos) -> str | None:
    if not is_matrix(pe) or pe.shape[0] < 1 or np.any(np.linalg.norm(pe, axis=1) == 0):
        return "pe harus (L, d) dengan tiap baris bukan vektor nol"
    if not is_integer(pos) or not 0 <= pos < pe.shape[0]:
        return "pos harus indeks int 0 <= pos < L"
    return None


@domain
def offset_similarity(offset, d_model, base=10000.0) -> str | None:
    if isinstance(offset, np.ndarray):
        if offset.dtype.kind not in "iu" or offset.ndim == 0:
            return "offset array harus berisi int, berdimensi 1 atau lebih"
    elif not is_real(offset):
        return "offset skalar harus int atau float"
    if not is_integer(d_model) or d_model <= 0 or d_model % 2:
        return "d_model harus int genap positif"
    return base_problem(base)


@domain
def self_attention(x) -> str | None:
    return (
        None
        if is_matrix(x) and x.dtype.kind == "f" and x.shape[0] >= 1 and x.shape[1] >= 1
        else "x harus array float (T, d) dengan T, d >= 1"
    )

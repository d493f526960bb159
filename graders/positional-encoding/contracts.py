"""The domain of each graded function's contract, as code.

The notebooks state, clause by clause, which inputs each function must handle ("Ketentuan yang
dinilai"); the graders may only call a student's function with such inputs. ``DOMAINS[function]``
takes the call's arguments and returns ``None`` for an input the contract covers, or the reason it
does not. ``tests/test_contracts.py`` runs every check against the reference with a caller that
applies these, and samples every strategy far beyond what grading draws, so a check or a
strategy that strays outside the stated contract fails the tests.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from pe_course.contracts import domains


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _matrix(value: Any) -> bool:
    return (
        isinstance(value, np.ndarray)
        and value.ndim == 2
        and value.dtype.kind in "iuf"
        and bool(np.all(np.isfinite(value)))
    )


def _ids(ids: Any, vocab: int) -> str | None:
    """K: ids is a Python list of ints or a 1-D int array, each id in 0 .. vocab - 1."""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            return "ids array harus int 1-D"
        values = ids.tolist()
    elif isinstance(ids, list):
        if not all(_integer(i) for i in ids):
            return "ids list harus berisi int"
        values = ids
    else:
        return "ids harus list atau array"
    if any(not 0 <= i < vocab for i in values):
        return "ada id di luar 0 .. vocab_size - 1"
    return None


def _base(base: Any) -> str | None:
    return None if _real(base) and base > 0 else "base harus bilangan positif"


def embed(ids, tok_table, pos_table) -> str | None:
    if not (_matrix(tok_table) and _matrix(pos_table)) or tok_table.shape[1] != pos_table.shape[1]:
        return "tok_table (V, d) dan pos_table (block_size, d) harus matriks dengan d yang sama"
    return _ids(ids, tok_table.shape[0])  # T > block_size is in the contract: ValueError


def one_hot(ids, vocab_size) -> str | None:
    if not _integer(vocab_size) or vocab_size < 1:
        return "vocab_size harus int positif"
    return _ids(ids, vocab_size)


def embed_backward(ids, grad_h, vocab_size, block_size) -> str | None:
    if not (_integer(vocab_size) and _integer(block_size)) or vocab_size < 1 or block_size < 1:
        return "vocab_size dan block_size harus int positif"
    if not _matrix(grad_h) or grad_h.shape[0] != len(ids) or grad_h.shape[0] > block_size:
        return "grad_h harus (T, d) dengan T = len(ids) <= block_size"
    return _ids(ids, vocab_size)


def frequencies(d_model, base=10000.0) -> str | None:
    if not _integer(d_model) or d_model <= 0 or d_model % 2:
        return "d_model harus int genap positif"
    return _base(base)


def positional_encoding(length, d_model, base=10000.0) -> str | None:
    if not (_integer(length) and _integer(d_model)):
        return "length dan d_model harus int"  # negative / odd / zero: ValueError is in the contract
    return _base(base)


def rotation_matrix(theta) -> str | None:
    return None if _real(theta) else "theta harus bilangan real"


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
    if not _integer(k):
        return "k harus bilangan bulat"
    return _base(base)  # odd d_model is in the contract: ValueError


def apply_rope(x, positions=None, base=10000.0) -> str | None:
    if not _matrix(x) or x.dtype.kind != "f":
        return "x harus array float (T, d)"  # an int x is outside the contract (K1: "array float")
    if positions is not None:
        values = np.asarray(positions) if isinstance(positions, (list, np.ndarray)) else None
        if values is None or values.shape != (x.shape[0],) or values.dtype.kind not in "iuf":
            return "positions harus list atau array panjang T"
        if not np.all(np.isfinite(values)):
            return "positions harus bilangan real"
    return _base(base)  # odd d is in the contract: ValueError


def rope_scores(q, k, base=10000.0) -> str | None:
    if not (_matrix(q) and _matrix(k)) or q.shape[1] != k.shape[1] or q.shape[1] % 2:
        return "q (Tq, d) dan k (Tk, d) harus matriks dengan d genap yang sama"
    return _base(base)


def position_similarity(pe, pos) -> str | None:
    if not _matrix(pe) or pe.shape[0] < 1 or np.any(np.linalg.norm(pe, axis=1) == 0):
        return "pe harus (L, d) dengan tiap baris bukan vektor nol"
    if not _integer(pos) or not 0 <= pos < pe.shape[0]:
        return "pos harus indeks int 0 <= pos < L"
    return None


def offset_similarity(offset, d_model, base=10000.0) -> str | None:
    if isinstance(offset, np.ndarray):
        if offset.dtype.kind not in "iu" or offset.ndim == 0:
            return "offset array harus berisi int, berdimensi 1 atau lebih"
    elif not _real(offset):
        return "offset skalar harus int atau float"
    if not _integer(d_model) or d_model <= 0 or d_model % 2:
        return "d_model harus int genap positif"
    return _base(base)


def self_attention(x) -> str | None:
    return (
        None
        if _matrix(x) and x.dtype.kind == "f" and x.shape[0] >= 1 and x.shape[1] >= 1
        else "x harus array float (T, d) dengan T, d >= 1"
    )


DOMAINS = domains(
    embed,
    one_hot,
    embed_backward,
    frequencies,
    positional_encoding,
    rotation_matrix,
    shift_encoding,
    apply_rope,
    rope_scores,
    position_similarity,
    offset_similarity,
    self_attention,
)

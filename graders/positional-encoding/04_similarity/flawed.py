"""Wrong students of 04_similarity's graded functions, for the self-validation (``pe-course build``):
``@careful`` code with one catalogued misconception (diagnosed with exactly it), ``@flawed`` code with
one realistic slip (losing exactly the clauses named); see ``pe_course.engine.declarations``.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import flawed


# -- one realistic slip each, in otherwise correct code: exactly the clauses named are charged -----
@flawed("position_similarity", "K2")
def sim_divides_by_reference_norm_squared(pe, pos):
    """Divides by ``‖pe[pos]‖²`` only: right when every row has the reference row's norm (a PE table)."""
    pe = np.asarray(pe, dtype=float)
    return pe @ pe[pos] / np.dot(pe[pos], pe[pos])


@flawed("position_similarity", "K2")
def sim_normalises_in_place(pe, pos):
    """Normalises a copy of the table in place: ``/=`` cannot write floats into an int table."""
    pe = np.array(pe)
    pe /= np.linalg.norm(pe, axis=1, keepdims=True)
    return pe @ pe[pos]


@flawed("offset_similarity", "K3")
def offset_outer_flattens(offset, d_model, base=10000.0):
    """``np.outer`` flattens its arguments: a 2-D offset comes back as one long 1-D array."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    result = np.cos(np.outer(np.asarray(offset, dtype=float), omega)).sum(axis=1)
    return float(result[0]) if np.ndim(offset) == 0 else result


@flawed("offset_similarity", "K3")
def offset_loop_over_first_axis(offset, d_model, base=10000.0):
    """Loops over ``offset`` for arrays: each element of a 2-D array is a whole row."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    if np.ndim(offset) == 0:
        return float(np.cos(offset * omega).sum())
    return np.array([np.cos(o * omega).sum() for o in offset])


@flawed("offset_similarity", "K2", "K3")
def offset_vectorized(offset, d_model, base=10000.0):
    """``np.vectorize`` of the scalar formula: a scalar offset comes back as a 0-d array, not a float
    (K2), and an empty array raises (no ``otypes``: K3)."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    return np.vectorize(lambda o: np.cos(o * omega).sum())(offset)


@flawed("offset_similarity", "K4")
def offset_base_ignored(offset, d_model, base=10000.0):
    """Writes the default 10000 into the frequencies instead of ``base``."""
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    result = np.cos(np.asarray(offset, dtype=float)[..., None] * omega).sum(axis=-1)
    return float(result) if np.ndim(offset) == 0 else result


@flawed("offset_similarity", "K1")
def offset_float_truncated(offset, d_model, base=10000.0):
    """Takes an offset for a whole number of positions: ``int(offset)`` truncates a float offset."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    if np.ndim(offset) == 0:
        return float(np.cos(int(offset) * omega).sum())
    return np.cos(np.asarray(offset)[..., None] * omega).sum(axis=-1)


@flawed("offset_similarity", "K1")
def offset_frequency_per_column(offset, d_model, base=10000.0):
    """``omega_i = base ** (-i / d_model)``: the exponent without the factor 2."""
    omega = base ** (-np.arange(d_model // 2) / d_model)
    result = np.cos(np.asarray(offset, dtype=float)[..., None] * omega).sum(axis=-1)
    return float(result) if np.ndim(offset) == 0 else result


@flawed("self_attention", "K2")
def attention_unstable_softmax(x):
    """``np.exp`` of the raw scores: a row's sum of exps overflows to inf for scores near 709."""
    x = np.asarray(x, dtype=float)
    weights = np.exp(x @ x.T / np.sqrt(x.shape[1]))
    return weights / weights.sum(axis=1, keepdims=True) @ x


@flawed("self_attention", "K2")
def attention_global_max(x):
    """Subtracts one maximum for the whole score matrix: a row whose own maximum is far below it
    (huge scores, ``x * 1000``) gets only zeros and 0 / 0."""
    x = np.asarray(x, dtype=float)
    scores = x @ x.T / np.sqrt(x.shape[1])
    weights = np.exp(scores - scores.max())
    return weights / weights.sum(axis=1, keepdims=True) @ x


@flawed("self_attention", "K1")
def attention_max_without_keepdims(x):
    """``scores.max(axis=1)`` without ``keepdims``: broadcasting subtracts the maxima column by column."""
    x = np.asarray(x, dtype=float)
    scores = x @ x.T / np.sqrt(x.shape[1])
    weights = np.exp(scores - scores.max(axis=1))
    return weights / weights.sum(axis=1, keepdims=True) @ x


@flawed("self_attention", "K1")
def attention_scaled_by_length(x):
    """Divides the scores by √T (``x.shape[0]``) instead of √d."""
    x = np.asarray(x, dtype=float)
    scores = x @ x.T / np.sqrt(x.shape[0])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True) @ x


# -- students written against the release of 2026-12-03 (issue 29): each slip shows on a public case
@flawed("offset_similarity", "K3")
def offset_vectorized_to_float(offset, d_model, base=10000.0):
    """np.vectorize over a scalar version, floats for scalars: fails on an empty array (no otypes)."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    one = np.vectorize(lambda o: float(np.cos(omega * o).sum()))
    return float(one(offset)) if np.ndim(offset) == 0 else one(np.asarray(offset))

"""Correct implementations of 04_similarity's graded functions (``@alternative``): genuinely different
from the reference only where the contract leaves a choice open. Each must score full marks with
no misconception diagnosed, by the graders and by the public check (``pe-course build``).
Self-contained (NumPy only): ``tests/build/test_self_validation.py`` pastes this file into a notebook.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import alternative


# The frequencies these students compute themselves, as 02_sinusoidal/alternatives.py does (this file
# is pasted whole into a notebook by tests/build/test_self_validation.py, so it imports nothing of ours).
def freq_exp(d_model, base=10000.0):
    return np.exp(-np.arange(0, d_model, 2) * np.log(base) / d_model)


@alternative("position_similarity")
def sim_loop(pe, pos):
    pe = np.asarray(pe, dtype=float)
    return np.array([np.dot(pe[pos], r) / np.sqrt(np.dot(pe[pos], pe[pos]) * np.dot(r, r)) for r in pe])


@alternative("position_similarity")
def sim_normalize(pe, pos):
    pe = np.asarray(pe, dtype=float)
    u = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    return np.einsum("ld,d->l", u, u[pos])


@alternative("offset_similarity")
def offset_loop(offset, d_model, base=10000.0):
    def one(o):
        return float(sum(np.cos(o / base ** (2 * i / d_model)) for i in range(d_model // 2)))

    if np.ndim(offset) == 0:
        return one(float(offset))
    arr = np.asarray(offset, dtype=float)
    return np.array([one(o) for o in arr.ravel()]).reshape(arr.shape)


@alternative("offset_similarity")
def offset_complex(offset, d_model, base=10000.0):
    off = np.asarray(offset, dtype=float)
    res = np.real(np.exp(1j * np.multiply.outer(off, freq_exp(d_model, base)))).sum(-1)
    return float(res) if res.ndim == 0 else res


@alternative("self_attention")
def att_loop(x):
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    out = np.zeros_like(x)
    for i in range(t):
        s = np.array([x[i] @ x[j] / np.sqrt(d) for j in range(t)])
        w = np.exp(s - s.max())
        out[i] = (w / w.sum()) @ x
    return out


@alternative("self_attention")
def att_logsumexp(x):
    x = np.asarray(x, dtype=float)
    s = x @ x.T / np.sqrt(x.shape[1])
    m = s.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True))
    return np.exp(s - lse) @ x

"""Catalogue of 04_similarity's misconceptions (``@misconception``): documented wrong implementations
with a hint for students; each docstring says what the mistaken idea is (how one is diagnosed:
``pe_course.engine.diagnosis``).
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import misconception


def _freqs(d_model, base=10000.0):
    return base ** (-np.arange(0, d_model, 2) / d_model)


def _softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@misconception(
    "position_similarity",
    "dot-not-cosine",
    "Kemiripan kosinus membagi perkalian titik dengan kedua norma: (pe @ pe[pos]) / (|pe| * |pe[pos]|).",
)
def similarity_dot(pe, pos):
    """Returns the raw dot products without dividing by the norms."""
    pe = np.asarray(pe, dtype=float)
    return pe @ pe[pos]


@misconception(
    "offset_similarity",
    "sin-not-cos",
    "sin(a)sin(b) + cos(a)cos(b) = cos(a - b): jumlahnya memakai cos(omega_i * offset), bukan sin.",
)
def offset_with_sin(offset, d_model, base=10000.0):
    """Sums sin(omega_i * offset) instead of cos."""
    offset = np.asarray(offset, dtype=float)
    total = np.sin(np.multiply.outer(offset, _freqs(d_model, base))).sum(axis=-1)
    return float(total) if total.ndim == 0 else total


@misconception(
    "self_attention", "no-sqrt-scaling", "Skor dibagi sqrt(d) sebelum softmax: softmax(x x^T / sqrt(d)) x."
)
def attention_unscaled(x):
    """Forgets the 1/sqrt(d) scaling of the scores."""
    x = np.asarray(x, dtype=float)
    return _softmax_rows(x @ x.T) @ x


@misconception(
    "self_attention",
    "softmax-wrong-axis",
    "Softmax dihitung per *baris* (axis=-1): bobot tiap token query berjumlah 1.",
)
def attention_wrong_axis(x):
    """Normalises the softmax over columns (axis=0) instead of rows."""
    x = np.asarray(x, dtype=float)
    s = x @ x.T / np.sqrt(x.shape[1])
    e = np.exp(s - s.max(axis=0, keepdims=True))
    return (e / e.sum(axis=0, keepdims=True)) @ x


@misconception(
    "self_attention",
    "unstable-softmax",
    "Kurangi dulu nilai maksimum tiap baris sebelum np.exp agar tidak overflow untuk input besar.",
)
def attention_unstable(x):
    """Calls np.exp on the raw scores, which overflows (inf/nan) for large inputs."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x @ x.T / np.sqrt(x.shape[1]))
        return (e / e.sum(axis=-1, keepdims=True)) @ x

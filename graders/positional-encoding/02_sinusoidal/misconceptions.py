"""Catalogue of 02_sinusoidal's misconceptions (``@misconception``): documented wrong implementations
with a hint for students; each docstring says what the mistaken idea is (how one is diagnosed:
``pe_course.engine.diagnosis``).
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import misconception


def _freqs(d_model, base=10000.0):
    return base ** (-np.arange(0, d_model, 2) / d_model)


def _validate_pe(length, d_model):
    """The reference's argument checks, so that a variant differs from it only by its misconception."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model harus genap dan positif, didapat {d_model}")
    if length < 0:
        raise ValueError(f"length tidak boleh negatif, didapat {length}")


# A misconception of `frequencies` is also carried into `positional_encoding` automatically
# (checks.py declares how positional_encoding builds on frequencies).
@misconception(
    "frequencies",
    "freq-per-column",
    "Eksponennya 2i/d_model per *pasangan* kolom (i = 0, 1, ..., d_model/2 - 1), bukan i/d_model.",
)
def frequencies_per_column(d_model, base=10000.0):
    """Uses exponent i/d (the pair index) instead of 2i/d."""
    return base ** (-np.arange(d_model // 2) / d_model)


@misconception(
    "frequencies",
    "inverted-frequency",
    "omega_i = base^(-2i/d_model): frekuensi *mengecil* dari 1 ke arah kolom akhir; "
    "tanda eksponennya negatif.",
)
def frequencies_inverted(d_model, base=10000.0):
    """Uses base^(+2i/d), so frequencies grow instead of shrinking."""
    return base ** (np.arange(0, d_model, 2) / d_model)


@misconception(
    "positional_encoding",
    "sin-cos-swapped",
    "Kolom genap (2i) berisi sin dan kolom ganjil (2i+1) berisi cos — PE(pos=0) = [0, 1, 0, 1, ...].",
)
def pe_swapped(length, d_model, base=10000.0):
    """Puts cos in the even columns and sin in the odd ones."""
    _validate_pe(length, d_model)
    angles = np.arange(length)[:, None] * _freqs(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angles), np.sin(angles)
    return pe


@misconception(
    "positional_encoding",
    "freq-per-column",
    "Kedua kolom satu pasangan (2i, 2i+1) memakai frekuensi yang *sama* omega_i = base^(-2i/d_model); "
    "jangan hitung eksponen per kolom j/d_model.",
)
def pe_per_column(length, d_model, base=10000.0):
    """Gives every column j its own exponent j/d instead of sharing 2i/d within a pair."""
    _validate_pe(length, d_model)
    j = np.arange(d_model)
    angles = np.arange(length)[:, None] / base ** (j[None, :] / d_model)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


@misconception(
    "positional_encoding",
    "halves-not-interleaved",
    "sin dan cos berselang-seling (kolom 0 sin, 1 cos, 2 sin, ...), bukan setengah kiri sin dan "
    "setengah kanan cos.",
)
def pe_halves(length, d_model, base=10000.0):
    """Puts all sines in the first half of the columns and all cosines in the second half."""
    _validate_pe(length, d_model)
    angles = np.arange(length)[:, None] * _freqs(d_model, base)[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)

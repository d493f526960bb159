"""Catalogue of 03_rotation's misconceptions (``@misconception``): documented wrong implementations
with a hint for students; each docstring says what the mistaken idea is (how one is diagnosed:
``pe_course.engine.diagnosis``).
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import misconception


def _freqs(d_model, base=10000.0):
    return base ** (-np.arange(0, d_model, 2) / d_model)


def _validate_even(d):
    if d % 2 != 0:
        raise ValueError(f"d harus genap, didapat {d}")


@misconception(
    "rotation_matrix",
    "rotation-transposed",
    "M(theta) = [[cos, sin], [-sin, cos]] memetakan (sin a, cos a) ke (sin(a+theta), cos(a+theta)); "
    "matriks transposnya memutar ke arah sebaliknya.",
)
def rotation_transposed(theta):
    """Returns the transpose [[cos, -sin], [sin, cos]], which rotates the (sin, cos) pair backwards."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


@misconception(
    "shift_encoding",
    "overwritten-pair",
    "Kedua kolom baru dihitung dari nilai lama s dan c: c' = -sin θ·s + cos θ·c memakai s yang lama, "
    "bukan s' yang baru saja ditulis. Irisan seperti pe[..., 0::2] adalah view, jadi tulis hasilnya ke "
    "array baru.",
)
def shift_overwritten_pair(pe, k, base=10000.0):
    """Writes s' into the sine columns first, then computes c' from that new s' instead of the old s."""
    out = np.array(pe, dtype=float)
    d_model = out.shape[-1]
    _validate_even(d_model)
    theta = k * _freqs(d_model, base)
    s, c = out[..., 0::2], out[..., 1::2]
    s[...] = np.cos(theta) * s + np.sin(theta) * c
    c[...] = -np.sin(theta) * s + np.cos(theta) * c
    return out


@misconception(
    "apply_rope",
    "rope-rotate-half",
    "RoPE di bab ini memutar pasangan kolom *berdekatan* (2i, 2i+1), bukan kolom i dengan i + d/2 "
    "(gaya 'rotate_half').",
)
def rope_rotate_half(x, positions=None, base=10000.0):
    """Pairs column i with column i + d/2 (the GPT-NeoX 'rotate_half' layout)."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    _validate_even(d)
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * _freqs(d, base)[None, :]
    a, b = x[:, : d // 2], x[:, d // 2 :]
    return np.concatenate([a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)], axis=1)


@misconception(
    "apply_rope",
    "rope-wrong-direction",
    "Rumusnya (a cos phi - b sin phi, a sin phi + b cos phi); tanda sin yang tertukar memutar "
    "vektor ke arah sebaliknya.",
)
def rope_wrong_direction(x, positions=None, base=10000.0):
    """Rotates by -phi: (a cos + b sin, -a sin + b cos)."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    _validate_even(d)
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * _freqs(d, base)[None, :]
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2], out[:, 1::2] = a * np.cos(phi) + b * np.sin(phi), -a * np.sin(phi) + b * np.cos(phi)
    return out


@misconception(
    "apply_rope",
    "freq-per-column",
    "Frekuensi pasangan ke-i adalah omega_i = base^(-2i/d), dengan eksponen 2i/d per *pasangan* "
    "kolom (2i, 2i+1), bukan i/d.",
)
def rope_per_column_frequency(x, positions=None, base=10000.0):
    """Uses omega_i = base^(-i/d) (the pair index i, not 2i) for the rotation angles."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    _validate_even(d)
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * (base ** (-np.arange(d // 2) / d))[None, :]
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2], out[:, 1::2] = a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)
    return out


@misconception(
    "apply_rope",
    "overwritten-pair",
    "Kedua kolom baru dihitung dari nilai lama a dan b: b' = a sin φ + b cos φ memakai a yang lama, "
    "bukan a' yang baru saja ditulis. Irisan seperti x[:, 0::2] adalah view, jadi tulis hasilnya ke "
    "array baru.",
)
def rope_overwritten_pair(x, positions=None, base=10000.0):
    """Writes a' into the even columns first, then computes b' from that new a' instead of the old a."""
    x = np.array(x, dtype=float)
    t, d = x.shape
    _validate_even(d)
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * _freqs(d, base)[None, :]
    a, b = x[:, 0::2], x[:, 1::2]
    a[...] = a * np.cos(phi) - b * np.sin(phi)
    b[...] = a * np.sin(phi) + b * np.cos(phi)
    return x

"""Correct implementations of 03_rotation's graded functions (``@alternative``): genuinely different
from the reference only where the contract leaves a choice open. Each must score full marks with
no misconception diagnosed, by the graders and by the public check (``pe-course build``).
Self-contained (NumPy only): ``tests/build/test_self_validation.py`` pastes this file into a notebook.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import alternative


# The frequencies these students compute themselves, as 02_sinusoidal/alternatives.py does (this file
# is pasted whole into a notebook by tests/build/test_self_validation.py, so it imports nothing of ours).
def freq_loop(d_model, base=10000.0):
    return np.array([1.0 / base ** (2 * i / d_model) for i in range(d_model // 2)])


def freq_exp(d_model, base=10000.0):
    return np.exp(-np.arange(0, d_model, 2) * np.log(base) / d_model)


@alternative("rotation_matrix")
def rot_loop(theta):
    out = np.zeros((2, 2))
    out[0, 0] = out[1, 1] = np.cos(theta)
    out[0, 1] = np.sin(theta)
    out[1, 0] = -np.sin(theta)
    return out


@alternative("rotation_matrix")
def rot_complex(theta):
    z = np.exp(1j * theta)
    return np.array([[z.real, z.imag], [-z.imag, z.real]])


@alternative("shift_encoding")
def shift_matrix(pe, k, base=10000.0):
    pe = np.asarray(pe, dtype=float)
    d = pe.shape[-1]
    if d % 2:
        raise ValueError("odd")
    w = freq_loop(d, base)
    big = np.zeros((d, d))
    for i, wi in enumerate(w):
        big[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = rot_loop(wi * k)
    return pe @ big.T


@alternative("shift_encoding")
def shift_complex(pe, k, base=10000.0):
    pe = np.asarray(pe, dtype=float)
    if pe.shape[-1] % 2:
        raise ValueError("odd")
    z = pe[..., 1::2] + 1j * pe[..., 0::2]  # cos + i sin
    z = z * np.exp(1j * k * freq_exp(pe.shape[-1], base))
    out = np.empty_like(pe)
    out[..., 0::2], out[..., 1::2] = z.imag, z.real
    return out


@alternative("apply_rope")
def rope_loop(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("odd")
    positions = list(range(t)) if positions is None else list(positions)
    out = x.copy()
    for r in range(t):
        for i in range(d // 2):
            m = np.array(
                [
                    [
                        np.cos(positions[r] * base ** (-2 * i / d)),
                        -np.sin(positions[r] * base ** (-2 * i / d)),
                    ],
                    [
                        np.sin(positions[r] * base ** (-2 * i / d)),
                        np.cos(positions[r] * base ** (-2 * i / d)),
                    ],
                ]
            )
            out[r, 2 * i : 2 * i + 2] = m @ x[r, 2 * i : 2 * i + 2]
    return out


@alternative("apply_rope")
def rope_as_hints_say(x, positions=None, base=10000.0):
    """The notebook's hints followed literally: np.arange or np.asarray(positions, dtype=float), then phi."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("d ganjil")
    positions = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = positions[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(phi) - x[:, 1::2] * np.sin(phi)
    out[:, 1::2] = x[:, 0::2] * np.sin(phi) + x[:, 1::2] * np.cos(phi)
    return out


@alternative("apply_rope")
def rope_llama(x, positions=None, base=10000.0):
    """LLaMA's formulation: view each pair (x[2i], x[2i+1]) as one complex number, times e^{i m theta_i}."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("odd")
    pos = np.arange(t, dtype=float) if positions is None else np.asarray(positions, dtype=float)
    freqs_cis = np.exp(1j * np.outer(pos, 1.0 / base ** (np.arange(0, d, 2) / d)))
    x_complex = x.reshape(t, d // 2, 2) @ np.array([1.0, 1j])
    rotated = x_complex * freqs_cis
    return np.stack([rotated.real, rotated.imag], axis=-1).reshape(t, d)


@alternative("apply_rope")
def rope_complex(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("odd")
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * np.outer(pos, freq_exp(d, base)))
    return np.stack([z.real, z.imag], axis=-1).reshape(t, d)


@alternative("apply_rope")
def rope_complex_dtype(x, positions=None, base=10000.0):
    """The complex route of 03's Pendalaman, returned as a complex array whose imaginary parts are 0."""
    x = np.asarray(x, dtype=float)
    length, d = x.shape
    if d % 2:
        raise ValueError("d harus genap")
    m = np.arange(length) if positions is None else np.asarray(positions, dtype=float)
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * m[:, None] * base ** (-np.arange(0, d, 2) / d))
    out = np.empty((length, d), dtype=complex)
    out[:, 0::2], out[:, 1::2] = z.real, z.imag
    return out


@alternative("rope_scores")
def scores_complex(q, k, base=10000.0):
    """Re(q_m conj(k_n)) summed over pairs, with both sides rotated in the complex plane."""

    def as_complex(x):
        x = rope_llama(x, base=base)
        return x[:, 0::2] + 1j * x[:, 1::2]

    return np.real(as_complex(q) @ np.conj(as_complex(k)).T)


@alternative("rope_scores")
def scores_einsum(q, k, base=10000.0):
    return np.einsum("md,nd->mn", rope_complex(q, base=base), rope_complex(k, base=base))


@alternative("rope_scores")
def scores_loop(q, k, base=10000.0):
    rq, rk = rope_loop(q, base=base), rope_loop(k, base=base)
    return np.array([[float(rq[m] @ rk[n]) for n in range(len(rk))] for m in range(len(rq))])

"""Correct implementations of 02_sinusoidal's graded functions (``@alternative``): genuinely different
from the reference only where the contract leaves a choice open. Each must score full marks with
no misconception diagnosed, by the graders and by the public check (``pe-course build``).
Self-contained (NumPy only): ``tests/build/test_self_validation.py`` pastes this file into a notebook.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import alternative


@alternative("frequencies")
def freq_loop(d_model, base=10000.0):
    return np.array([1.0 / base ** (2 * i / d_model) for i in range(d_model // 2)])


@alternative("frequencies")
def freq_exp(d_model, base=10000.0):
    return np.exp(-np.arange(0, d_model, 2) * np.log(base) / d_model)


@alternative("frequencies")
def freq_logspace(d_model, base=10000.0):
    """np.logspace from base^0 down to base^(-(d_model - 2) / d_model), d_model // 2 points."""
    return np.logspace(0.0, -(d_model - 2) / d_model, d_model // 2, base=base)


@alternative("positional_encoding")
def pe_loop(length, d_model, base=10000.0):
    if d_model <= 0 or d_model % 2 or length < 0:
        raise ValueError("bad")
    out = np.zeros((length, d_model))
    for p in range(length):
        for i in range(d_model // 2):
            out[p, 2 * i] = np.sin(p / base ** (2 * i / d_model))
            out[p, 2 * i + 1] = np.cos(p / base ** (2 * i / d_model))
    return out


@alternative("positional_encoding")
def pe_complex(length, d_model, base=10000.0):
    if not (d_model > 0 and d_model % 2 == 0) or length < 0:
        raise ValueError("bad")
    z = np.exp(1j * np.outer(np.arange(length), freq_exp(d_model, base)))
    return np.stack([z.imag, z.real], axis=-1).reshape(length, d_model)


@alternative("positional_encoding")
def pe_stacked_pairs(length, d_model, base=10000.0):
    """Calls `frequencies` (base passed on positionally) and interleaves sin and cos by stacking."""
    if d_model < 2 or d_model % 2 == 1:
        raise ValueError("d_model harus bilangan genap positif")
    if length < 0:
        raise ValueError("length harus >= 0")
    angle = np.outer(np.arange(length), frequencies(d_model, base))
    return np.stack([np.sin(angle), np.cos(angle)], axis=2).reshape(length, d_model)


# Students of positional_encoding here call `frequencies` by name, as the notebook suggests; while
# they are graded, the graders answer that name with the reference (a wrong frequencies costs only
# its own cell), and the public check (run here in-process) uses this one.
frequencies = freq_exp

"""Wrong students of 03_rotation's graded functions, for the self-validation (``pe-course build``):
``@careful`` code with one catalogued misconception (diagnosed with exactly it), ``@flawed`` code with
one realistic slip (losing exactly the clauses named); see ``pe_course.engine.declarations``.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import careful, flawed

from .alternatives import rope_as_hints_say


def _pairs_rotated(pe, theta):
    """Every pair (s, c) of the last axis rotated by M(theta): the right shift_encoding core."""
    out = np.empty(np.shape(pe))
    s, c = pe[..., 0::2], pe[..., 1::2]
    out[..., 0::2] = np.cos(theta) * s + np.sin(theta) * c
    out[..., 1::2] = -np.sin(theta) * s + np.cos(theta) * c
    return out


def _rope_core(x, positions, base):
    """The right RoPE rotation of x (T, d) at the given positions (an array)."""
    d = x.shape[1]
    phi = np.asarray(positions)[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    out = np.empty(x.shape)
    out[:, 0::2] = x[:, 0::2] * np.cos(phi) - x[:, 1::2] * np.sin(phi)
    out[:, 1::2] = x[:, 0::2] * np.sin(phi) + x[:, 1::2] * np.cos(phi)
    return out


# -- one catalogued misconception inside otherwise careful code ----------------------------------
@careful("apply_rope", "freq-per-column")
def rope_per_column_careful(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("d ganjil")
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * (base ** (-np.arange(d // 2) / d))[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(phi) - x[:, 1::2] * np.sin(phi)
    out[:, 1::2] = x[:, 0::2] * np.sin(phi) + x[:, 1::2] * np.cos(phi)
    return out


@careful("rope_scores", "rope-rotate-half")
def scores_rotate_half(q, k, base=10000.0):
    """rope_scores that rotates q and k itself, with the rotate-half layout (apply_rope is right)."""

    def rotate(x):
        t, d = x.shape
        if d % 2:
            raise ValueError("d ganjil")
        phi = np.arange(t)[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
        a, b = x[:, : d // 2], x[:, d // 2 :]
        return np.concatenate([a * np.cos(phi) - b * np.sin(phi), a * np.sin(phi) + b * np.cos(phi)], axis=1)

    return rotate(np.asarray(q, dtype=float)) @ rotate(np.asarray(k, dtype=float)).T


@careful("shift_encoding", "rotation-transposed")
def shift_transposed(pe, k, base=10000.0):
    """shift_encoding that builds each pair's rotation itself, transposed (rotation_matrix is right)."""
    pe = np.asarray(pe, dtype=float)
    d = pe.shape[-1]
    if d % 2:
        raise ValueError("d_model ganjil")
    out = np.empty_like(pe)
    for i in range(d // 2):
        theta = k * base ** (-2 * i / d)
        m = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        out[..., 2 * i : 2 * i + 2] = pe[..., 2 * i : 2 * i + 2] @ m.T
    return out


# -- one realistic slip each, in otherwise correct code: exactly the clauses named are charged -----
@flawed("shift_encoding", "K1")
def shift_wrong_sign_of_k(pe, k, base=10000.0):
    """theta = -omega k: shifts backwards (k = 0 still right)."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    return _pairs_rotated(pe, -k * base ** (-np.arange(0, d_model, 2) / d_model))


@flawed("shift_encoding", "K4")
def shift_early_return_for_zero_k(pe, k, base=10000.0):
    """``if k == 0: return pe`` before the odd d_model check."""
    if k == 0:
        return pe
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    return _pairs_rotated(pe, k * base ** (-np.arange(0, d_model, 2) / d_model))


@flawed("shift_encoding", "K2")
def shift_int_pe_into_int_output(pe, k, base=10000.0):
    """``np.empty_like(pe)`` of the input's dtype: an int pe gets its rotated values truncated."""
    pe = np.asarray(pe)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    theta = k * base ** (-np.arange(0, d_model, 2) / d_model)
    out = np.empty_like(pe)
    out[..., 0::2] = np.cos(theta) * pe[..., 0::2] + np.sin(theta) * pe[..., 1::2]
    out[..., 1::2] = -np.sin(theta) * pe[..., 0::2] + np.cos(theta) * pe[..., 1::2]
    return out


@flawed("shift_encoding", "K3")
def shift_without_base(pe, k, base=10000.0):
    """The frequencies always use 10000: a given base is ignored."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    return _pairs_rotated(pe, k * 10000.0 ** (-np.arange(0, d_model, 2) / d_model))


@flawed("shift_encoding", "K2")
def shift_table_only(pe, k, base=10000.0):
    """``pe[:, 0::2]``: a single row (d_model,) has no second axis."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    theta = k * base ** (-np.arange(0, d_model, 2) / d_model)
    out = np.empty_like(pe)
    out[:, 0::2] = np.cos(theta) * pe[:, 0::2] + np.sin(theta) * pe[:, 1::2]
    out[:, 1::2] = -np.sin(theta) * pe[:, 0::2] + np.cos(theta) * pe[:, 1::2]
    return out


@flawed("shift_encoding", "K1")
def shift_rows_sliced_without_ellipsis(pe, k, base=10000.0):
    """``pe[0::2]`` without ``...``: right for one row; for a table it takes rows, not columns."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    theta = k * base ** (-np.arange(0, d_model, 2) / d_model)
    s, c = pe[0::2], pe[1::2]
    out = np.empty_like(pe)
    out[0::2] = np.cos(theta) * s + np.sin(theta) * c
    out[1::2] = -np.sin(theta) * s + np.cos(theta) * c
    return out


@flawed("shift_encoding", "K3")
def shift_one_step_at_a_time(pe, k, base=10000.0):
    """Shifts by one position k times (``for _ in range(k)``): nothing happens for a negative k."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    for _ in range(k):
        pe = _pairs_rotated(pe, omega)
    return pe


@flawed("apply_rope", "K3")
def rope_without_base(x, positions=None, base=10000.0):
    """The frequencies always use 10000: a given base is ignored."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(
        x, np.arange(len(x)) if positions is None else np.asarray(positions, dtype=float), 10000.0
    )


@flawed("apply_rope", "K2")
def rope_positions_cast_to_int(x, positions=None, base=10000.0):
    """``np.asarray(positions, dtype=int)``: fractional positions are truncated."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(x, np.arange(len(x)) if positions is None else np.asarray(positions, dtype=int), base)


@flawed("apply_rope", "K2")
def rope_positions_list_unconverted(x, positions=None, base=10000.0):
    """``positions[:, None]`` on whatever came in: a Python list cannot be indexed so."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("d ganjil")
    if positions is None:
        positions = np.arange(t)
    phi = positions[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(phi) - x[:, 1::2] * np.sin(phi)
    out[:, 1::2] = x[:, 0::2] * np.sin(phi) + x[:, 1::2] * np.cos(phi)
    return out


@flawed("apply_rope", "K2")
def rope_ignores_positions(x, positions=None, base=10000.0):
    """Always rotates row t by t omega_i: the positions argument is never read."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(x, np.arange(len(x)), base)


@flawed("apply_rope", "K2")
def rope_angle_table_lookup(x, positions=None, base=10000.0):
    """Angles precomputed for positions 0 .. max and looked up by position: a negative position
    indexes from the end of the table, a fractional one is cut to an integer index."""
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("d ganjil")
    idx = np.arange(t) if positions is None else np.asarray(positions, dtype=int)
    size = int(np.abs(idx).max()) + 1
    table = np.arange(size)[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    phi = table[idx]
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(phi) - x[:, 1::2] * np.sin(phi)
    out[:, 1::2] = x[:, 0::2] * np.sin(phi) + x[:, 1::2] * np.cos(phi)
    return out


@flawed("apply_rope", "K2")
def rope_positions_or_default(x, positions=None, base=10000.0):
    """``positions or np.arange(T)``: the truth value of an array of several positions is ambiguous."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(x, np.asarray(positions or np.arange(len(x)), dtype=float), base)


@flawed("apply_rope", "K1")
def rope_second_column_from_new_first(x, positions=None, base=10000.0):
    """Writes a' into x's even columns, then computes b' from that new a' (the view slip)."""
    x = np.array(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("d ganjil")
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    phi = pos[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    a, b = x[:, 0::2], x[:, 1::2]
    a[:] = a * np.cos(phi) - b * np.sin(phi)
    b[:] = a * np.sin(phi) + b * np.cos(phi)
    return x


@flawed("apply_rope", "K4")
def rope_asserts_even_d(x, positions=None, base=10000.0):
    """``assert d % 2 == 0``: AssertionError instead of the ValueError the contract names."""
    x = np.asarray(x, dtype=float)
    assert x.shape[1] % 2 == 0, "d harus genap"
    return _rope_core(x, np.arange(len(x)) if positions is None else np.asarray(positions, dtype=float), base)


@flawed("rope_scores", "K3")
def scores_without_base(q, k, base=10000.0):
    """Calls the rotation without base: a given base is ignored."""
    return rope_as_hints_say(q) @ rope_as_hints_say(k).T


@flawed("rope_scores", "K2")
def scores_k_at_query_positions(q, k, base=10000.0):
    """Rotates k with q's positions 0 .. Tq-1 (right only when Tq = Tk)."""
    positions = np.arange(len(q))
    return rope_as_hints_say(q, positions, base) @ rope_as_hints_say(k, positions, base).T


@flawed("rope_scores", "K1")
def scores_scaled_by_sqrt_d(q, k, base=10000.0):
    """Divides by sqrt(d) as attention does; the notebook's S has no scaling."""
    return rope_as_hints_say(q, base=base) @ rope_as_hints_say(k, base=base).T / np.sqrt(np.shape(q)[1])


@flawed("rope_scores", "K1")
def scores_k_not_rotated(q, k, base=10000.0):
    """Rotates q only: the keys keep their content without their positions."""
    return rope_as_hints_say(q, base=base) @ np.asarray(k, dtype=float).T

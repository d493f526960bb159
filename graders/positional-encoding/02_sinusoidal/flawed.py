"""Wrong students of 02_sinusoidal's graded functions, for the self-validation (``pe-course build``):
``@careful`` code with one catalogued misconception (diagnosed with exactly it), ``@flawed`` code with
one realistic slip (losing exactly the clauses named); see ``pe_course.engine.declarations``.
"""

from __future__ import annotations

import numpy as np

from pe_course.engine import careful, flawed

from .alternatives import freq_exp

# Students of positional_encoding below call `frequencies` by name, as the notebook suggests; while
# they are graded, the graders answer that name with the reference (a wrong frequencies costs only
# its own cell), and the public check (run here in-process) uses this one.
frequencies = freq_exp


def _pe_checked(length, d_model, base):
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    angle = np.arange(length)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


# -- one catalogued misconception inside otherwise careful code ----------------------------------
@careful("positional_encoding", "halves-not-interleaved")
def pe_halves_careful(length, d_model, base=10000.0):
    """positional_encoding with every check and base passed on, but all sines before all cosines."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    angle = np.arange(length)[:, None] * frequencies(d_model, base=base)[None, :]
    return np.hstack([np.sin(angle), np.cos(angle)])


# -- one realistic slip each, in otherwise correct code: exactly the clauses named are charged -----
@flawed("positional_encoding", "K4")
def pe_rejects_two_columns(length, d_model, base=10000.0):
    """``d_model < 4`` in the check (meant: not positive): its own ValueError for the valid d_model = 2."""
    if d_model < 4 or d_model % 2 or length < 0:
        raise ValueError(f"d_model harus genap dan positif, didapat {d_model}")
    angles = np.arange(length)[:, None] * (base ** (-np.arange(0, d_model, 2) / d_model))[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


@flawed("frequencies", "K2")
def freq_base_hardcoded(d_model, base=10000.0):
    """The chapter's formula copied with the literal 10000: the ``base`` argument is ignored."""
    i = np.arange(d_model // 2)
    return 10000.0 ** (-2.0 * i / d_model)


@flawed("frequencies", "K1")
def freq_returns_list(d_model, base=10000.0):
    """Right values from a list comprehension, returned as a Python list."""
    return [base ** (-2 * i / d_model) for i in range(d_model // 2)]


@flawed("frequencies", "K1")
def freq_floor_division(d_model, base=10000.0):
    """``//`` for ``/`` in the exponent: -2i // d_model is -1 for every pair after the first."""
    i = np.arange(d_model // 2)
    return base ** (-2 * i // d_model).astype(float)


@flawed("positional_encoding", "K2")
def pe_base_not_passed_on(length, d_model, base=10000.0):
    """Calls ``frequencies(d_model)`` without passing ``base`` on."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    angle = np.arange(length)[:, None] * frequencies(d_model)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


@flawed("positional_encoding", "K2")
def pe_base_hardcoded(length, d_model, base=10000.0):
    """Writes the angle as pos / 10000^(2i/d_model) with the literal 10000."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    pe = np.zeros((length, d_model))
    for pos in range(length):
        for i in range(d_model // 2):
            pe[pos, 2 * i] = np.sin(pos / 10000 ** (2 * i / d_model))
            pe[pos, 2 * i + 1] = np.cos(pos / 10000 ** (2 * i / d_model))
    return pe


@flawed("positional_encoding", "K4")
def pe_early_return_for_length_zero(length, d_model, base=10000.0):
    """Returns the empty table for ``length = 0`` before checking ``d_model``."""
    if length == 0:
        return np.zeros((0, d_model))
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    angle = np.arange(length)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


@flawed("positional_encoding", "K3")
def pe_length_zero_flat(length, d_model, base=10000.0):
    """A special case for ``length = 0`` that returns ``np.array([])``, of shape (0,)."""
    if length == 0 and d_model > 0 and d_model % 2 == 0:
        return np.array([])
    return _pe_checked(length, d_model, base)


@flawed("positional_encoding", "K3")
def pe_length_zero_one_row(length, d_model, base=10000.0):
    """A special case for ``length = 0`` that returns one row of zeros, of shape (d_model,)."""
    if length == 0 and d_model > 0 and d_model % 2 == 0:
        return np.zeros(d_model)
    return _pe_checked(length, d_model, base)


@flawed("positional_encoding", "K3")
def pe_rejects_length_zero(length, d_model, base=10000.0):
    """``<=`` for ``<``: refuses ``length = 0`` as if it were negative."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length <= 0:
        raise ValueError("length harus positif")
    return _pe_checked(length, d_model, base)


@flawed("positional_encoding", "K4")
def pe_relies_on_numpy_errors(length, d_model, base=10000.0):
    """No argument checks: NumPy raises for odd d_model (broadcasting) and negative length, not for d_model = 0."""
    angle = np.arange(length)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


@flawed("positional_encoding", "K4")
def pe_checks_only_odd(length, d_model, base=10000.0):
    """Checks that d_model is even, not that it is positive: d_model = 0 gives an empty table."""
    if d_model % 2 != 0:
        raise ValueError("d_model harus genap")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    return pe_relies_on_numpy_errors(length, d_model, base)


@flawed("positional_encoding", "K4")
def pe_asserts_instead_of_raising(length, d_model, base=10000.0):
    """``assert`` for the argument checks: AssertionError instead of ValueError."""
    assert d_model > 0 and d_model % 2 == 0, "d_model harus genap dan positif"
    assert length >= 0, "length tidak boleh negatif"
    return pe_relies_on_numpy_errors(length, d_model, base)


@flawed("positional_encoding", "K1")
def pe_positions_from_one(length, d_model, base=10000.0):
    """Positions 1, ..., length instead of 0, ..., length - 1."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    angle = np.arange(1, length + 1)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


@flawed("positional_encoding", "K2")
def pe_base_truncated(length, d_model, base=10000.0):
    """``int(base)``, as if base were always a whole number: a fractional base is changed."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    return _pe_checked(length, d_model, int(base))


@flawed("positional_encoding", "K1")
def pe_transposed(length, d_model, base=10000.0):
    """Builds the table with positions along the columns: shape (d_model, length)."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    angle = frequencies(d_model, base)[:, None] * np.arange(length)[None, :]
    pe = np.zeros((d_model, length))
    pe[0::2], pe[1::2] = np.sin(angle), np.cos(angle)
    return pe


@flawed("positional_encoding", "K3")
def pe_rows_as_lists(length, d_model, base=10000.0):
    """Right values row by row in Python lists; ``length = 0`` gives ``[]``, of shape (0,)."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    rows = []
    for pos in range(length):
        row = []
        for w in frequencies(d_model, base):
            row += [float(np.sin(pos * w)), float(np.cos(pos * w))]
        rows.append(row)
    return rows


# -- students written against the release of 2026-12-03 (issue 29): each slip shows on a public case
@flawed("frequencies", "K2")
def freq_in_place(d_model, base=10000.0):
    """Raises an array filled with ``base`` to the power in place: an int base makes an int array."""
    omega = np.full(d_model // 2, base)
    omega **= -np.arange(0, d_model, 2) / d_model
    return omega


@flawed("positional_encoding", "K2")
def pe_in_place(length, d_model, base=10000.0):
    """positional_encoding with the same in-place power as freq_in_place (int base: UFuncTypeError)."""
    if d_model <= 0 or d_model % 2 or length < 0:
        raise ValueError("d_model harus genap positif dan length tidak negatif")
    omega = np.full(d_model // 2, base)
    omega **= -np.arange(0, d_model, 2) / d_model
    angles = np.arange(length)[:, None] * omega
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe

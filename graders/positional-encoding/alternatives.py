"""Students' code the graders must judge right: the graders' self-validation (``pe-course build``).

- ``ALTERNATIVES``: genuinely different correct implementations of every graded function, differing
  only where the contract leaves a choice open: loops or vectorised, einsum, one-hot products,
  complex numbers (the LLaMA-style RoPE), exp/log, rotation matrices, list or array handling, the
  dtype of the result. Each must score full marks with no misconception diagnosed.
- ``COMPOUND``: one catalogued misconception inside otherwise careful code (a kept ``ValueError``,
  a kept block-size check, a misconception carried into a function built on another). Each must
  lose points and be diagnosed with exactly that misconception.
"""

from __future__ import annotations

import numpy as np


def embed_onehot_matmul(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int).reshape(-1)
    if len(ids) > len(pos_table):
        raise ValueError("panjang melebihi block_size")
    one_hot = (ids[:, None] == np.arange(len(tok_table))[None, :]).astype(float)
    return one_hot @ tok_table + np.eye(len(pos_table))[: len(ids)] @ pos_table


def embed_loop(ids, tok_table, pos_table):
    ids = list(ids)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("panjang melebihi block_size")
    out = np.zeros((len(ids), tok_table.shape[1]))
    for t, token in enumerate(ids):
        out[t] = tok_table[token] + pos_table[t]
    return out


def one_hot_eye(ids, vocab_size):
    return np.eye(vocab_size)[np.asarray(ids, dtype=int).reshape(-1)]


def one_hot_loop(ids, vocab_size):
    out = np.zeros((len(ids), vocab_size))
    for t, token in enumerate(ids):
        out[t][token] = 1
    return out


def backward_onehot(ids, grad_h, vocab_size, block_size):
    ids = np.asarray(ids, dtype=int).reshape(-1)
    grad_h = np.asarray(grad_h, dtype=float)
    one_hot = np.eye(vocab_size)[ids]
    grad_pos = np.zeros((block_size, grad_h.shape[1]))
    grad_pos[: len(ids)] = grad_h
    return one_hot.T @ grad_h, grad_pos


def backward_loop(ids, grad_h, vocab_size, block_size):
    d = np.shape(grad_h)[1]
    grad_tok, grad_pos = np.zeros((vocab_size, d)), np.zeros((block_size, d))
    for t, token in enumerate(ids):
        grad_tok[token] += grad_h[t]
        grad_pos[t] += grad_h[t]
    return grad_tok, grad_pos


def freq_loop(d_model, base=10000.0):
    return np.array([1.0 / base ** (2 * i / d_model) for i in range(d_model // 2)])


def freq_exp(d_model, base=10000.0):
    return np.exp(-np.arange(0, d_model, 2) * np.log(base) / d_model)


# Students of positional_encoding below call `frequencies` by name, as the notebook suggests; while
# they are graded, the graders answer that name with the reference (a wrong frequencies costs only
# its own cell), and the public check (run here in-process) uses this one.
frequencies = freq_exp


def pe_loop(length, d_model, base=10000.0):
    if d_model <= 0 or d_model % 2 or length < 0:
        raise ValueError("bad")
    out = np.zeros((length, d_model))
    for p in range(length):
        for i in range(d_model // 2):
            out[p, 2 * i] = np.sin(p / base ** (2 * i / d_model))
            out[p, 2 * i + 1] = np.cos(p / base ** (2 * i / d_model))
    return out


def pe_complex(length, d_model, base=10000.0):
    if not (d_model > 0 and d_model % 2 == 0) or length < 0:
        raise ValueError("bad")
    z = np.exp(1j * np.outer(np.arange(length), freq_exp(d_model, base)))
    return np.stack([z.imag, z.real], axis=-1).reshape(length, d_model)


def freq_logspace(d_model, base=10000.0):
    """np.logspace from base^0 down to base^(-(d_model - 2) / d_model), d_model // 2 points."""
    return np.logspace(0.0, -(d_model - 2) / d_model, d_model // 2, base=base)


def pe_stacked_pairs(length, d_model, base=10000.0):
    """Calls `frequencies` (base passed on positionally) and interleaves sin and cos by stacking."""
    if d_model < 2 or d_model % 2 == 1:
        raise ValueError("d_model harus bilangan genap positif")
    if length < 0:
        raise ValueError("length harus >= 0")
    angle = np.outer(np.arange(length), frequencies(d_model, base))
    return np.stack([np.sin(angle), np.cos(angle)], axis=2).reshape(length, d_model)


def rot_loop(theta):
    out = np.zeros((2, 2))
    out[0, 0] = out[1, 1] = np.cos(theta)
    out[0, 1] = np.sin(theta)
    out[1, 0] = -np.sin(theta)
    return out


def rot_complex(theta):
    z = np.exp(1j * theta)
    return np.array([[z.real, z.imag], [-z.imag, z.real]])


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


def shift_complex(pe, k, base=10000.0):
    pe = np.asarray(pe, dtype=float)
    if pe.shape[-1] % 2:
        raise ValueError("odd")
    z = pe[..., 1::2] + 1j * pe[..., 0::2]  # cos + i sin
    z = z * np.exp(1j * k * freq_exp(pe.shape[-1], base))
    out = np.empty_like(pe)
    out[..., 0::2], out[..., 1::2] = z.imag, z.real
    return out


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


def rope_complex(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    if d % 2:
        raise ValueError("odd")
    pos = np.arange(t) if positions is None else np.asarray(positions, dtype=float)
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * np.outer(pos, freq_exp(d, base)))
    return np.stack([z.real, z.imag], axis=-1).reshape(t, d)


def scores_einsum(q, k, base=10000.0):
    return np.einsum("md,nd->mn", rope_complex(q, base=base), rope_complex(k, base=base))


def scores_loop(q, k, base=10000.0):
    rq, rk = rope_loop(q, base=base), rope_loop(k, base=base)
    return np.array([[float(rq[m] @ rk[n]) for n in range(len(rk))] for m in range(len(rq))])


def sim_loop(pe, pos):
    pe = np.asarray(pe, dtype=float)
    return np.array([np.dot(pe[pos], r) / np.sqrt(np.dot(pe[pos], pe[pos]) * np.dot(r, r)) for r in pe])


def sim_normalize(pe, pos):
    pe = np.asarray(pe, dtype=float)
    u = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    return np.einsum("ld,d->l", u, u[pos])


def offset_loop(offset, d_model, base=10000.0):
    def one(o):
        return float(sum(np.cos(o / base ** (2 * i / d_model)) for i in range(d_model // 2)))

    if np.ndim(offset) == 0:
        return one(float(offset))
    arr = np.asarray(offset, dtype=float)
    return np.array([one(o) for o in arr.ravel()]).reshape(arr.shape)


def offset_complex(offset, d_model, base=10000.0):
    off = np.asarray(offset, dtype=float)
    res = np.real(np.exp(1j * np.multiply.outer(off, freq_exp(d_model, base)))).sum(-1)
    return float(res) if res.ndim == 0 else res


def att_loop(x):
    x = np.asarray(x, dtype=float)
    t, d = x.shape
    out = np.zeros_like(x)
    for i in range(t):
        s = np.array([x[i] @ x[j] / np.sqrt(d) for j in range(t)])
        w = np.exp(s - s.max())
        out[i] = (w / w.sum()) @ x
    return out


def att_logsumexp(x):
    x = np.asarray(x, dtype=float)
    s = x @ x.T / np.sqrt(x.shape[1])
    m = s.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True))
    return np.exp(s - lse) @ x


def one_hot_int(ids, vocab_size):
    """Integer 0/1 entries: the contract asks for values, not a dtype."""
    return np.eye(vocab_size, dtype=np.int64)[np.asarray(ids, dtype=np.int64)]


def embed_take(ids, tok_table, pos_table):
    """np.take on a list of ids; keeps the tables' dtype (int tables give an int result)."""
    ids = [int(i) for i in ids]
    if len(ids) > len(pos_table):
        raise ValueError("panjang melebihi block_size")
    return np.take(tok_table, ids, axis=0) + np.asarray(pos_table)[: len(ids)]


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


def scores_complex(q, k, base=10000.0):
    """Re(q_m conj(k_n)) summed over pairs, with both sides rotated in the complex plane."""

    def as_complex(x):
        x = rope_llama(x, base=base)
        return x[:, 0::2] + 1j * x[:, 1::2]

    return np.real(as_complex(q) @ np.conj(as_complex(k)).T)


ALTERNATIVES = {
    "embed": [embed_onehot_matmul, embed_take, embed_loop],
    "one_hot": [one_hot_eye, one_hot_int, one_hot_loop],
    "embed_backward": [backward_onehot, backward_loop],
    "frequencies": [freq_loop, freq_exp, freq_logspace],
    "positional_encoding": [pe_loop, pe_complex, pe_stacked_pairs],
    "rotation_matrix": [rot_loop, rot_complex],
    "shift_encoding": [shift_matrix, shift_complex],
    "apply_rope": [rope_loop, rope_as_hints_say, rope_llama, rope_complex],
    "rope_scores": [scores_complex, scores_einsum, scores_loop],
    "position_similarity": [sim_loop, sim_normalize],
    "offset_similarity": [offset_loop, offset_complex],
    "self_attention": [att_loop, att_logsumexp],
}


# -- one misconception inside otherwise careful code ----------------------------------------------
def embed_checked_but_pos_by_ids(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[ids]


def embed_without_position_but_checked(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("T melebihi block_size")
    return tok_table[ids]


def embed_block_size_check_only_missing(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    return tok_table[ids] + pos_table[np.arange(len(ids))]


def backward_pos_by_ids_careful(ids, grad_h, vocab_size, block_size):
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    grad_tok = np.zeros((vocab_size, grad_h.shape[1]))
    np.add.at(grad_tok, ids, grad_h)
    grad_pos = np.zeros((block_size, grad_h.shape[1]))
    np.add.at(grad_pos, ids, grad_h)
    return grad_tok, grad_pos


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


def pe_halves_careful(length, d_model, base=10000.0):
    """positional_encoding with every check and base passed on, but all sines before all cosines."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    angle = np.arange(length)[:, None] * frequencies(d_model, base=base)[None, :]
    return np.hstack([np.sin(angle), np.cos(angle)])


COMPOUND = [
    ("embed", embed_checked_but_pos_by_ids, "pos-indexed-by-ids"),
    ("embed", embed_without_position_but_checked, "missing-position"),
    ("embed", embed_block_size_check_only_missing, "no-block-size-check"),
    ("embed_backward", backward_pos_by_ids_careful, "pos-indexed-by-ids"),
    ("apply_rope", rope_per_column_careful, "freq-per-column"),
    ("rope_scores", scores_rotate_half, "rope-rotate-half"),
    ("shift_encoding", shift_transposed, "rotation-transposed"),
    ("positional_encoding", pe_halves_careful, "halves-not-interleaved"),
]


# -- one realistic slip each, in otherwise correct code: exactly the clauses in the set are charged --
def embed_boundary_off_by_one(ids, tok_table, pos_table):
    """``>=`` for ``>``: refuses T = block_size."""
    ids = np.asarray(ids, dtype=int)
    if len(ids) >= len(pos_table):
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[: len(ids)]


def embed_list_ids_unhandled(ids, tok_table, pos_table):
    """Reads ``ids.shape``: a Python list has none."""
    T = ids.shape[0]
    if pos_table.shape[0] < T:
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[:T]


def embed_empty_ids_as_float(ids, tok_table, pos_table):
    """``np.array(ids)`` without a dtype: ``[]`` becomes a float array that cannot index."""
    ids = np.array(ids)
    if len(ids) > len(pos_table):
        raise ValueError("T melebihi block_size")
    return tok_table[ids] + pos_table[: len(ids)]


def embed_int_tables_overflow(ids, tok_table, pos_table):
    """Writes into an output of the tables' dtype: int tables get the wrong values when mixed."""
    ids = np.asarray(ids, dtype=int)
    if len(ids) > len(pos_table):
        raise ValueError("T melebihi block_size")
    out = np.empty((len(ids), tok_table.shape[1]), dtype=tok_table.dtype)
    out[:] = tok_table[ids]
    out += pos_table[: len(ids)].astype(tok_table.dtype)
    return out


def one_hot_empty_ids_as_float(ids, vocab_size):
    ids = np.array(ids)
    out = np.zeros((len(ids), vocab_size))
    out[np.arange(len(ids)), ids] = 1.0
    return out


def backward_returns_lists(ids, grad_h, vocab_size, block_size):
    """Right values, returned as nested lists."""
    grad_tok, grad_pos = backward_onehot(ids, grad_h, vocab_size, block_size)
    return grad_tok.tolist(), grad_pos.tolist()


def backward_bincount_without_minlength(ids, grad_h, vocab_size, block_size):
    """``np.bincount`` per column without ``minlength``: only as many rows as the largest id + 1."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.stack([np.bincount(ids, weights=grad_h[:, j]) for j in range(d)], axis=1)
    grad_pos = np.zeros((block_size, d))
    grad_pos[: len(ids)] = grad_h
    return grad_tok, grad_pos


def backward_block_size_full_unhandled(ids, grad_h, vocab_size, block_size):
    """Pads grad_pos with ``block_size - T`` rows through a slice that breaks for T = block_size."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.zeros((vocab_size, d))
    np.add.at(grad_tok, ids, grad_h)
    if len(ids) == block_size:
        raise IndexError("tidak ada baris nol yang tersisa")
    return grad_tok, np.vstack([grad_h, np.zeros((block_size - len(ids), d))])


FLAWED = [
    ("embed", embed_boundary_off_by_one, {"K4"}),
    ("embed", embed_list_ids_unhandled, {"K2"}),
    ("embed", embed_empty_ids_as_float, {"K3"}),
    ("embed", embed_int_tables_overflow, {"K2"}),
    ("one_hot", one_hot_empty_ids_as_float, {"K3"}),
    ("embed_backward", backward_returns_lists, {"K2"}),
    ("embed_backward", backward_bincount_without_minlength, {"K2"}),
    ("embed_backward", backward_block_size_full_unhandled, {"K3"}),
]


# -- 02_sinusoidal: one realistic slip each ---------------------------------------------------------
def freq_base_hardcoded(d_model, base=10000.0):
    """The chapter's formula copied with the literal 10000: the ``base`` argument is ignored."""
    i = np.arange(d_model // 2)
    return 10000.0 ** (-2.0 * i / d_model)


def freq_returns_list(d_model, base=10000.0):
    """Right values from a list comprehension, returned as a Python list."""
    return [base ** (-2 * i / d_model) for i in range(d_model // 2)]


def freq_floor_division(d_model, base=10000.0):
    """``//`` for ``/`` in the exponent: -2i // d_model is -1 for every pair after the first."""
    i = np.arange(d_model // 2)
    return base ** (-2 * i // d_model).astype(float)


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


def _pe_checked(length, d_model, base):
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    angle = np.arange(length)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def pe_length_zero_flat(length, d_model, base=10000.0):
    """A special case for ``length = 0`` that returns ``np.array([])``, of shape (0,)."""
    if length == 0 and d_model > 0 and d_model % 2 == 0:
        return np.array([])
    return _pe_checked(length, d_model, base)


def pe_length_zero_one_row(length, d_model, base=10000.0):
    """A special case for ``length = 0`` that returns one row of zeros, of shape (d_model,)."""
    if length == 0 and d_model > 0 and d_model % 2 == 0:
        return np.zeros(d_model)
    return _pe_checked(length, d_model, base)


def pe_rejects_length_zero(length, d_model, base=10000.0):
    """``<=`` for ``<``: refuses ``length = 0`` as if it were negative."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError("d_model harus genap dan positif")
    if length <= 0:
        raise ValueError("length harus positif")
    return _pe_checked(length, d_model, base)


def pe_relies_on_numpy_errors(length, d_model, base=10000.0):
    """No argument checks: NumPy raises for odd d_model (broadcasting) and negative length, not for d_model = 0."""
    angle = np.arange(length)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def pe_checks_only_odd(length, d_model, base=10000.0):
    """Checks that d_model is even, not that it is positive: d_model = 0 gives an empty table."""
    if d_model % 2 != 0:
        raise ValueError("d_model harus genap")
    if length < 0:
        raise ValueError("length tidak boleh negatif")
    return pe_relies_on_numpy_errors(length, d_model, base)


def pe_asserts_instead_of_raising(length, d_model, base=10000.0):
    """``assert`` for the argument checks: AssertionError instead of ValueError."""
    assert d_model > 0 and d_model % 2 == 0, "d_model harus genap dan positif"
    assert length >= 0, "length tidak boleh negatif"
    return pe_relies_on_numpy_errors(length, d_model, base)


def pe_positions_from_one(length, d_model, base=10000.0):
    """Positions 1, ..., length instead of 0, ..., length - 1."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    angle = np.arange(1, length + 1)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def pe_base_truncated(length, d_model, base=10000.0):
    """``int(base)``, as if base were always a whole number: a fractional base is changed."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    return _pe_checked(length, d_model, int(base))


def pe_transposed(length, d_model, base=10000.0):
    """Builds the table with positions along the columns: shape (d_model, length)."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("argumen tidak sah")
    angle = frequencies(d_model, base)[:, None] * np.arange(length)[None, :]
    pe = np.zeros((d_model, length))
    pe[0::2], pe[1::2] = np.sin(angle), np.cos(angle)
    return pe


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


def pe_rejects_two_columns(length, d_model, base=10000.0):
    """``d_model < 4`` in the check (meant: not positive): its own ValueError for the valid d_model = 2."""
    if d_model < 4 or d_model % 2 or length < 0:
        raise ValueError(f"d_model harus genap dan positif, didapat {d_model}")
    angles = np.arange(length)[:, None] * (base ** (-np.arange(0, d_model, 2) / d_model))[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


FLAWED_SINUSOIDAL = [
    ("positional_encoding", pe_rejects_two_columns, {"K4"}),
    ("frequencies", freq_base_hardcoded, {"K2"}),
    ("frequencies", freq_returns_list, {"K1"}),
    ("frequencies", freq_floor_division, {"K1"}),
    ("positional_encoding", pe_base_not_passed_on, {"K2"}),
    ("positional_encoding", pe_base_hardcoded, {"K2"}),
    ("positional_encoding", pe_early_return_for_length_zero, {"K4"}),
    ("positional_encoding", pe_length_zero_flat, {"K3"}),
    ("positional_encoding", pe_length_zero_one_row, {"K3"}),
    ("positional_encoding", pe_rejects_length_zero, {"K3"}),
    ("positional_encoding", pe_relies_on_numpy_errors, {"K4"}),
    ("positional_encoding", pe_checks_only_odd, {"K4"}),
    ("positional_encoding", pe_asserts_instead_of_raising, {"K4"}),
    ("positional_encoding", pe_positions_from_one, {"K1"}),
    ("positional_encoding", pe_base_truncated, {"K2"}),
    ("positional_encoding", pe_transposed, {"K1"}),
    ("positional_encoding", pe_rows_as_lists, {"K3"}),
]


# -- 04_similarity: one realistic slip each, exactly the clauses in the set are charged --------------
def sim_divides_by_reference_norm_squared(pe, pos):
    """Divides by ``‖pe[pos]‖²`` only: right when every row has the reference row's norm (a PE table)."""
    pe = np.asarray(pe, dtype=float)
    return pe @ pe[pos] / np.dot(pe[pos], pe[pos])


def sim_normalises_in_place(pe, pos):
    """Normalises a copy of the table in place: ``/=`` cannot write floats into an int table."""
    pe = np.array(pe)
    pe /= np.linalg.norm(pe, axis=1, keepdims=True)
    return pe @ pe[pos]


def offset_outer_flattens(offset, d_model, base=10000.0):
    """``np.outer`` flattens its arguments: a 2-D offset comes back as one long 1-D array."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    result = np.cos(np.outer(np.asarray(offset, dtype=float), omega)).sum(axis=1)
    return float(result[0]) if np.ndim(offset) == 0 else result


def offset_loop_over_first_axis(offset, d_model, base=10000.0):
    """Loops over ``offset`` for arrays: each element of a 2-D array is a whole row."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    if np.ndim(offset) == 0:
        return float(np.cos(offset * omega).sum())
    return np.array([np.cos(o * omega).sum() for o in offset])


def offset_vectorized(offset, d_model, base=10000.0):
    """``np.vectorize`` of the scalar formula: a scalar offset comes back as a 0-d array, not a float
    (K2), and an empty array raises (no ``otypes``: K3)."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    return np.vectorize(lambda o: np.cos(o * omega).sum())(offset)


def offset_base_ignored(offset, d_model, base=10000.0):
    """Writes the default 10000 into the frequencies instead of ``base``."""
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    result = np.cos(np.asarray(offset, dtype=float)[..., None] * omega).sum(axis=-1)
    return float(result) if np.ndim(offset) == 0 else result


def offset_float_truncated(offset, d_model, base=10000.0):
    """Takes an offset for a whole number of positions: ``int(offset)`` truncates a float offset."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    if np.ndim(offset) == 0:
        return float(np.cos(int(offset) * omega).sum())
    return np.cos(np.asarray(offset)[..., None] * omega).sum(axis=-1)


def offset_frequency_per_column(offset, d_model, base=10000.0):
    """``omega_i = base ** (-i / d_model)``: the exponent without the factor 2."""
    omega = base ** (-np.arange(d_model // 2) / d_model)
    result = np.cos(np.asarray(offset, dtype=float)[..., None] * omega).sum(axis=-1)
    return float(result) if np.ndim(offset) == 0 else result


def attention_unstable_softmax(x):
    """``np.exp`` of the raw scores: a row's sum of exps overflows to inf for scores near 709."""
    x = np.asarray(x, dtype=float)
    weights = np.exp(x @ x.T / np.sqrt(x.shape[1]))
    return weights / weights.sum(axis=1, keepdims=True) @ x


def attention_global_max(x):
    """Subtracts one maximum for the whole score matrix: a row whose own maximum is far below it
    (huge scores, ``x * 1000``) gets only zeros and 0 / 0."""
    x = np.asarray(x, dtype=float)
    scores = x @ x.T / np.sqrt(x.shape[1])
    weights = np.exp(scores - scores.max())
    return weights / weights.sum(axis=1, keepdims=True) @ x


def attention_max_without_keepdims(x):
    """``scores.max(axis=1)`` without ``keepdims``: broadcasting subtracts the maxima column by column."""
    x = np.asarray(x, dtype=float)
    scores = x @ x.T / np.sqrt(x.shape[1])
    weights = np.exp(scores - scores.max(axis=1))
    return weights / weights.sum(axis=1, keepdims=True) @ x


def attention_scaled_by_length(x):
    """Divides the scores by √T (``x.shape[0]``) instead of √d."""
    x = np.asarray(x, dtype=float)
    scores = x @ x.T / np.sqrt(x.shape[0])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True) @ x


FLAWED_SIMILARITY = [
    ("position_similarity", sim_divides_by_reference_norm_squared, {"K2"}),
    ("position_similarity", sim_normalises_in_place, {"K2"}),
    ("offset_similarity", offset_outer_flattens, {"K3"}),
    ("offset_similarity", offset_loop_over_first_axis, {"K3"}),
    ("offset_similarity", offset_vectorized, {"K2", "K3"}),
    ("offset_similarity", offset_base_ignored, {"K4"}),
    ("offset_similarity", offset_float_truncated, {"K1"}),
    ("offset_similarity", offset_frequency_per_column, {"K1"}),
    ("self_attention", attention_unstable_softmax, {"K2"}),
    ("self_attention", attention_global_max, {"K2"}),
    ("self_attention", attention_max_without_keepdims, {"K1"}),
    ("self_attention", attention_scaled_by_length, {"K1"}),
]


# -- 03_rotation: one realistic slip each, in otherwise correct code ---------------------------------
def _pairs_rotated(pe, theta):
    """Every pair (s, c) of the last axis rotated by M(theta): the right shift_encoding core."""
    out = np.empty(np.shape(pe))
    s, c = pe[..., 0::2], pe[..., 1::2]
    out[..., 0::2] = np.cos(theta) * s + np.sin(theta) * c
    out[..., 1::2] = -np.sin(theta) * s + np.cos(theta) * c
    return out


def shift_wrong_sign_of_k(pe, k, base=10000.0):
    """theta = -omega k: shifts backwards (k = 0 still right)."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    return _pairs_rotated(pe, -k * base ** (-np.arange(0, d_model, 2) / d_model))


def shift_early_return_for_zero_k(pe, k, base=10000.0):
    """``if k == 0: return pe`` before the odd d_model check."""
    if k == 0:
        return pe
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    return _pairs_rotated(pe, k * base ** (-np.arange(0, d_model, 2) / d_model))


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


def shift_without_base(pe, k, base=10000.0):
    """The frequencies always use 10000: a given base is ignored."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2:
        raise ValueError("d_model ganjil")
    return _pairs_rotated(pe, k * 10000.0 ** (-np.arange(0, d_model, 2) / d_model))


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


def _rope_core(x, positions, base):
    """The right RoPE rotation of x (T, d) at the given positions (an array)."""
    d = x.shape[1]
    phi = np.asarray(positions)[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    out = np.empty(x.shape)
    out[:, 0::2] = x[:, 0::2] * np.cos(phi) - x[:, 1::2] * np.sin(phi)
    out[:, 1::2] = x[:, 0::2] * np.sin(phi) + x[:, 1::2] * np.cos(phi)
    return out


def rope_without_base(x, positions=None, base=10000.0):
    """The frequencies always use 10000: a given base is ignored."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(
        x, np.arange(len(x)) if positions is None else np.asarray(positions, dtype=float), 10000.0
    )


def rope_positions_cast_to_int(x, positions=None, base=10000.0):
    """``np.asarray(positions, dtype=int)``: fractional positions are truncated."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(x, np.arange(len(x)) if positions is None else np.asarray(positions, dtype=int), base)


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


def rope_ignores_positions(x, positions=None, base=10000.0):
    """Always rotates row t by t omega_i: the positions argument is never read."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(x, np.arange(len(x)), base)


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


def rope_positions_or_default(x, positions=None, base=10000.0):
    """``positions or np.arange(T)``: the truth value of an array of several positions is ambiguous."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] % 2:
        raise ValueError("d ganjil")
    return _rope_core(x, np.asarray(positions or np.arange(len(x)), dtype=float), base)


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


def rope_asserts_even_d(x, positions=None, base=10000.0):
    """``assert d % 2 == 0``: AssertionError instead of the ValueError the contract names."""
    x = np.asarray(x, dtype=float)
    assert x.shape[1] % 2 == 0, "d harus genap"
    return _rope_core(x, np.arange(len(x)) if positions is None else np.asarray(positions, dtype=float), base)


def scores_without_base(q, k, base=10000.0):
    """Calls the rotation without base: a given base is ignored."""
    return rope_as_hints_say(q) @ rope_as_hints_say(k).T


def scores_k_at_query_positions(q, k, base=10000.0):
    """Rotates k with q's positions 0 .. Tq-1 (right only when Tq = Tk)."""
    positions = np.arange(len(q))
    return rope_as_hints_say(q, positions, base) @ rope_as_hints_say(k, positions, base).T


def scores_scaled_by_sqrt_d(q, k, base=10000.0):
    """Divides by sqrt(d) as attention does; the notebook's S has no scaling."""
    return rope_as_hints_say(q, base=base) @ rope_as_hints_say(k, base=base).T / np.sqrt(np.shape(q)[1])


def scores_k_not_rotated(q, k, base=10000.0):
    """Rotates q only: the keys keep their content without their positions."""
    return rope_as_hints_say(q, base=base) @ np.asarray(k, dtype=float).T


FLAWED_ROTATION = [
    ("shift_encoding", shift_wrong_sign_of_k, {"K1"}),
    ("shift_encoding", shift_early_return_for_zero_k, {"K4"}),
    ("shift_encoding", shift_int_pe_into_int_output, {"K2"}),
    ("shift_encoding", shift_without_base, {"K3"}),
    ("shift_encoding", shift_table_only, {"K2"}),
    ("shift_encoding", shift_rows_sliced_without_ellipsis, {"K1"}),
    ("shift_encoding", shift_one_step_at_a_time, {"K3"}),
    ("apply_rope", rope_without_base, {"K3"}),
    ("apply_rope", rope_positions_cast_to_int, {"K2"}),
    ("apply_rope", rope_positions_list_unconverted, {"K2"}),
    ("apply_rope", rope_ignores_positions, {"K2"}),
    ("apply_rope", rope_angle_table_lookup, {"K2"}),
    ("apply_rope", rope_positions_or_default, {"K2"}),
    ("apply_rope", rope_second_column_from_new_first, {"K1"}),
    ("apply_rope", rope_asserts_even_d, {"K4"}),
    ("rope_scores", scores_without_base, {"K3"}),
    ("rope_scores", scores_k_at_query_positions, {"K2"}),
    ("rope_scores", scores_scaled_by_sqrt_d, {"K1"}),
    ("rope_scores", scores_k_not_rotated, {"K1"}),
]


# -- students written against the release of 2026-12-03 (issue 29): each slip shows on a public case --
def one_hot_bool(ids, vocab_size):
    """A comparison table: bool entries, read as 0/1 (the contract asks for values, not a dtype)."""
    ids = np.asarray(ids, dtype=np.int64)
    return ids[:, None] == np.arange(vocab_size)


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


def embed_in_place_on_pos(ids, tok_table, pos_table):
    """Adds the token rows into a copy of pos_table in place: an int pos_table cannot take floats."""
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) > len(pos_table):
        raise ValueError("T > block_size")
    h = pos_table[: len(ids)].copy()
    h += tok_table[ids]
    return h


def backward_grad_pos_unpadded(ids, grad_h, vocab_size, block_size):
    """grad_pos is grad_h itself: (T, d), not (block_size, d), whenever T < block_size."""
    ids = np.asarray(ids, dtype=np.int64)
    grad_tok = np.zeros((vocab_size, grad_h.shape[1]))
    np.add.at(grad_tok, ids, grad_h)
    return grad_tok, np.array(grad_h, dtype=float)


def freq_in_place(d_model, base=10000.0):
    """Raises an array filled with ``base`` to the power in place: an int base makes an int array."""
    omega = np.full(d_model // 2, base)
    omega **= -np.arange(0, d_model, 2) / d_model
    return omega


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


def offset_vectorized_to_float(offset, d_model, base=10000.0):
    """np.vectorize over a scalar version, floats for scalars: fails on an empty array (no otypes)."""
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    one = np.vectorize(lambda o: float(np.cos(omega * o).sum()))
    return float(one(offset)) if np.ndim(offset) == 0 else one(np.asarray(offset))


ALTERNATIVES["one_hot"].append(one_hot_bool)
ALTERNATIVES["apply_rope"].append(rope_complex_dtype)

FLAWED_HELD_OUT = [
    ("embed", embed_in_place_on_pos, {"K2"}),
    ("embed_backward", backward_grad_pos_unpadded, {"K2"}),
    ("frequencies", freq_in_place, {"K2"}),
    ("positional_encoding", pe_in_place, {"K2"}),
    ("offset_similarity", offset_vectorized_to_float, {"K3"}),
]

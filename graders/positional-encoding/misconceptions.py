"""Catalogue of misconceptions: documented wrong implementations with a hint for students.

A student's function is diagnosed with a misconception when, on every graded call where the
wrong implementation and the reference behave differently, the student's function behaved like
the wrong implementation (``pe_course.diagnosis.diagnose``). The self-validation tests check that each
entry loses points on its cell and is diagnosed. Docstrings say what the mistaken idea is.
"""

from __future__ import annotations

import numpy as np

from pe_course.checks import misconception


def _freqs(d_model, base=10000.0):
    return base ** (-np.arange(0, d_model, 2) / d_model)


def _validate_pe(length, d_model):
    """The reference's argument checks, so that a variant differs from it only by its misconception."""
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model harus genap dan positif, didapat {d_model}")
    if length < 0:
        raise ValueError(f"length tidak boleh negatif, didapat {length}")


def _check_block_size(ids, pos_table):
    """The reference's T > block_size check, so that an embed variant differs only by its misconception."""
    if len(ids) > len(pos_table):
        raise ValueError(f"panjang urutan T={len(ids)} melebihi block_size={len(pos_table)}")


def _validate_even(d):
    if d % 2 != 0:
        raise ValueError(f"d harus genap, didapat {d}")


# -- embed ------------------------------------------------------------------------------------
@misconception(
    "embed",
    "pos-indexed-by-ids",
    "Vektor posisi diambil dengan indeks posisi t (pos_table[:T]), bukan dengan id token. "
    "Posisi ke-t selalu memakai baris ke-t, apa pun tokennya.",
)
def embed_pos_by_ids(ids, tok_table, pos_table):
    """Looks the position table up with the token ids instead of the positions 0..T-1."""
    ids = np.asarray(ids, dtype=int)
    _check_block_size(ids, pos_table)
    return tok_table[ids] + pos_table[ids]


@misconception(
    "embed",
    "concat-not-add",
    "Embedding posisi ditambahkan (h_t = tok[ids_t] + pos[t]), bukan digabung; ukuran vektor tetap d.",
)
def embed_concat(ids, tok_table, pos_table):
    """Concatenates token and position vectors, giving (T, 2d) instead of adding them."""
    ids = np.asarray(ids, dtype=int)
    _check_block_size(ids, pos_table)
    return np.concatenate([tok_table[ids], pos_table[: len(ids)]], axis=1)


@misconception(
    "embed",
    "missing-position",
    "Jangan lupa menambahkan vektor posisi pos_table[t]; tanpa itu token yang sama di "
    "posisi berbeda menghasilkan vektor yang sama.",
)
def embed_no_position(ids, tok_table, pos_table):
    """Returns only the token lookup; the position row is never added."""
    ids = np.asarray(ids, dtype=int)
    _check_block_size(ids, pos_table)
    return tok_table[ids]


@misconception(
    "embed",
    "no-block-size-check",
    "Periksa panjang dulu: jika T > pos_table.shape[0] (block_size), lempar ValueError dengan "
    "pesan yang jelas, karena tabel posisi yang dipelajari tidak punya baris untuk posisi itu.",
)
def embed_no_check(ids, tok_table, pos_table):
    """Indexes pos_table with arange(T) without checking T <= block_size (IndexError instead)."""
    ids = np.asarray(ids, dtype=int)
    return tok_table[ids] + pos_table[np.arange(len(ids))]


# -- one_hot ----------------------------------------------------------------------------------
@misconception(
    "one_hot",
    "one-hot-transposed",
    "Bentuknya (T, vocab_size): satu baris per posisi, dengan 1.0 di kolom ids[t].",
)
def one_hot_transposed(ids, vocab_size):
    """Builds the (vocab_size, T) matrix: one column per position."""
    ids = np.asarray(ids, dtype=int)
    out = np.zeros((vocab_size, len(ids)))
    out[ids, np.arange(len(ids))] = 1.0
    return out


# -- embed_backward ---------------------------------------------------------------------------
@misconception(
    "embed_backward",
    "add-at-missing",
    "grad_tok[ids] += grad_h tidak menjumlahkan id yang berulang (hanya satu yang tersimpan). "
    "Pakai np.add.at(grad_tok, ids, grad_h).",
)
def backward_without_add_at(ids, grad_h, vocab_size, block_size):
    """Uses buffered fancy-index assignment, so repeated ids keep only one gradient."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.zeros((vocab_size, d))
    grad_tok[ids] += grad_h
    grad_pos = np.zeros((block_size, d))
    grad_pos[: len(ids)] = grad_h
    return grad_tok, grad_pos


@misconception(
    "embed_backward",
    "pos-indexed-by-ids",
    "grad_pos[t] menerima grad_h[t] menurut *posisi* t, bukan menurut id token: "
    "posisi ke-t selalu memakai baris ke-t tabel posisi, apa pun tokennya.",
)
def backward_pos_by_ids(ids, grad_h, vocab_size, block_size):
    """Accumulates the position gradient by token id (the forward pass's pos-indexed-by-ids, carried over)."""
    ids = np.asarray(ids, dtype=int)
    grad_h = np.asarray(grad_h, dtype=float)
    d = grad_h.shape[1]
    grad_tok = np.zeros((vocab_size, d))
    np.add.at(grad_tok, ids, grad_h)
    grad_pos = np.zeros((block_size, d))
    np.add.at(grad_pos, ids, grad_h)
    return grad_tok, grad_pos


# -- frequencies / positional_encoding ---------------------------------------------------------
# A misconception of `frequencies` is also carried into `positional_encoding` automatically
# (graders/checks_sinusoidal.py declares how positional_encoding builds on frequencies).
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


# -- rotation_matrix --------------------------------------------------------------------------
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


# -- shift_encoding -------------------------------------------------------------------------
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


# -- apply_rope -------------------------------------------------------------------------------
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


# -- position_similarity ----------------------------------------------------------------------
@misconception(
    "position_similarity",
    "dot-not-cosine",
    "Kemiripan kosinus membagi perkalian titik dengan kedua norma: (pe @ pe[pos]) / (|pe| * |pe[pos]|).",
)
def similarity_dot(pe, pos):
    """Returns the raw dot products without dividing by the norms."""
    pe = np.asarray(pe, dtype=float)
    return pe @ pe[pos]


# -- offset_similarity ------------------------------------------------------------------------
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


# -- self_attention ---------------------------------------------------------------------------
def _softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


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

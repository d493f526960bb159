"""Properties of the graded functions that hold without any reference solution.

Both sides run these: the hidden graders on their generated inputs, and the public check in the
student's kernel on the public inputs (this file ships with the release as
``public_checks/properties.py``; ``pe-course release`` copies it). So it imports NumPy only, and a
property receives ``c``, which offers ``call(fn, *args)`` (the student's result, or a failure
saying what went wrong), ``array(value, shape, what)``, ``close(actual, expected, what, inputs=...)``
and ``fail(message, input)`` — the graders' ``Grader`` and the public checker alike.
Messages are Indonesian; what a property enforces is a clause of the notebook's contract.

Since this file ships to students, a property never computes a graded function, nor any number of
its answer: it compares the student's results with each other, with the inputs it was given
(selected, not transformed), with 0 and 1, and with numbers handed to it as data by the caller
(the graders compute those from the reference; the public ones ship in ``<notebook>.json``).
``tests/build/test_release.py`` (section 8) runs every property on its public inputs and fails when a
value it computes from its inputs alone is the answer, a row of it, or one of its numbers.
"""

from __future__ import annotations

import numpy as np


def _brief_shape(name: str, value: np.ndarray) -> str:
    return f"{name} {tuple(np.shape(value))}"


# -- 01_embedding ---------------------------------------------------------------------------------
def embed_same_token_differs_by_position(c, token, tok_table, pos_table) -> None:
    """The same token at every position: row t minus row 0 equals pos_table[t] - pos_table[0]."""
    length = pos_table.shape[0] - 1  # T < block_size: an ordinary input
    ids = np.full(length, token, dtype=np.int64)
    shown = f"embed({ids.tolist()}, {_brief_shape('tok', tok_table)}, {_brief_shape('pos', pos_table)})"
    out = c.array(
        c.call("embed", ids, tok_table, pos_table), (length, tok_table.shape[1]), f"keluaran `{shown}`"
    )
    c.close(
        out - out[0],
        pos_table[:length] - pos_table[0],
        "selisih baris keluaran untuk token yang sama (harus sama dengan selisih baris pos_table)",
        inputs=shown,
    )


def one_hot_times_table_is_lookup(c, ids, table) -> None:
    """one_hot(ids, V) @ table equals table[ids]."""
    vocab = table.shape[0]
    shown = f"one_hot({np.asarray(ids).tolist()}, {vocab})"
    one_hot = c.array(c.call("one_hot", ids, vocab), (len(ids), vocab), f"keluaran `{shown}`")
    c.close(
        one_hot @ table,
        table[np.asarray(ids)],
        f"one_hot(ids, {vocab}) @ tabel (harus sama dengan tabel[ids])",
        inputs=shown,
    )


def backward_sums_repeated_ids(c, ids, grad_h, vocab_size, block_size) -> None:
    """Every row of grad_h is added to grad_tok exactly once (the column sums agree), ids that do not
    occur get zero rows, and grad_pos[t] = grad_h[t] for t < T. No per-id sum is built here."""
    ids = np.asarray(ids, dtype=np.int64)
    shown = f"embed_backward({ids.tolist()}, grad_h {tuple(grad_h.shape)}, {vocab_size}, {block_size})"
    result = c.call("embed_backward", ids, grad_h, vocab_size, block_size)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        c.fail(f"`{shown}` harus mengembalikan dua nilai (grad_tok, grad_pos).", input=shown)
    d = grad_h.shape[1]
    grad_tok = c.array(result[0], (vocab_size, d), f"grad_tok dari `{shown}`")
    grad_pos = c.array(result[1], (block_size, d), f"grad_pos dari `{shown}`")
    c.close(
        grad_tok.sum(axis=0),
        grad_h.sum(axis=0),
        "jumlah tiap kolom grad_tok (harus sama dengan jumlah tiap kolom grad_h: setiap baris grad_h "
        "dijumlahkan tepat sekali ke baris id-nya, juga bila id itu muncul berulang)",
        inputs=shown,
    )
    absent = sorted(set(range(vocab_size)) - set(ids.tolist()))
    if absent:
        c.close(
            grad_tok[absent],
            np.zeros((len(absent), d)),
            f"baris grad_tok untuk id yang tidak muncul di ids ({absent}; harus nol)",
            inputs=shown,
        )
    c.close(grad_pos[: len(ids)], grad_h, "grad_pos[:T] (harus sama dengan grad_h)", inputs=shown)


# -- 02_sinusoidal --------------------------------------------------------------------------------
def frequencies_geometric(c, d_model) -> None:
    """omega_0 = 1, and the frequencies form a decreasing geometric sequence: the ratio of two
    consecutive ones is the same for every i and lies between 0 and 1 (its value is not given here)."""
    shown = f"frequencies({d_model})"
    omega = c.array(c.call("frequencies", d_model), (d_model // 2,), f"keluaran `{shown}`")
    c.close(omega[:1], np.ones(1), "frekuensi pertama omega_0 (harus base^0 = 1)", inputs=shown)
    if d_model > 4:
        ratio = omega[1:] / omega[:-1]
        c.close(
            ratio[1:],
            np.full(d_model // 2 - 2, ratio[0]),
            "rasio dua frekuensi berurutan omega_(i+1) / omega_i (harus sama untuk setiap i: deret geometri)",
            inputs=shown,
        )
    if d_model > 2 and not 0 < omega[1] / omega[0] < 1:
        c.fail(
            f"Frekuensi keluaran `{shown}` tidak mengecil dari omega_0 ke omega_1 (rasio omega_1 / omega_0 "
            "harus di antara 0 dan 1): periksa tanda eksponennya.",
            input=shown,
        )


def pe_pairs_on_unit_circle(c, length, d_model) -> None:
    """Row 0 is [0, 1, 0, 1, ...], and every pair (PE[p, 2i], PE[p, 2i+1]) = (sin, cos) of one angle
    lies on the unit circle."""
    shown = f"positional_encoding({length}, {d_model})"
    pe = c.array(c.call("positional_encoding", length, d_model), (length, d_model), f"keluaran `{shown}`")
    c.close(
        pe[0],
        np.tile([0.0, 1.0], d_model // 2),
        "baris posisi 0 (harus [0, 1, 0, 1, ...]: sin 0 = 0 di kolom genap, cos 0 = 1 di kolom ganjil)",
        inputs=shown,
    )
    c.close(
        pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2,
        np.ones((length, d_model // 2)),
        "PE[:, 2i]² + PE[:, 2i+1]² (kolom 2i berisi sin dan kolom 2i+1 cos dari sudut yang sama, jadi jumlahnya 1 hingga pembulatan)",
        inputs=shown,
    )


def pe_dot_depends_on_offset(c, length, d_model) -> None:
    """PE(p)·PE(q) depends only on the offset p - q: the student's Gram matrix PE PEᵀ is constant
    along every diagonal (a Toeplitz matrix). Only entries of that matrix are compared."""
    shown = f"positional_encoding({length}, {d_model})"
    pe = c.array(c.call("positional_encoding", length, d_model), (length, d_model), f"keluaran `{shown}`")
    gram = pe @ pe.T
    c.close(
        gram[1:, 1:],
        gram[:-1, :-1],
        "PE(p+1)·PE(q+1) (harus sama dengan PE(p)·PE(q): hanya offset p - q yang menentukan)",
        inputs=shown,
    )


# -- 04_similarity ---------------------------------------------------------------------------------
def similarity_self_and_symmetric(c, pe, pos) -> None:
    """sim[pos] = 1, every value in [-1, 1], and sim(p, q) = sim(q, p) for the next row q."""
    length = pe.shape[0]
    shown = f"position_similarity(pe {tuple(pe.shape)}, {pos})"
    sim = c.array(c.call("position_similarity", pe, pos), (length,), f"keluaran `{shown}`")
    c.close(sim[pos], 1.0, f"elemen ke-{pos} (kemiripan baris acuan dengan dirinya sendiri)", inputs=shown)
    if np.any(np.abs(sim) > 1 + 1e-9):
        c.fail(
            f"Ada nilai keluaran `{shown}` di luar [-1, 1]: bagi perkalian titik dengan norma baris acuan "
            "dan norma setiap baris.",
            input=shown,
        )
    other = (pos + 1) % length
    shown_other = f"position_similarity(pe {tuple(pe.shape)}, {other})"
    sim_other = c.array(c.call("position_similarity", pe, other), (length,), f"keluaran `{shown_other}`")
    c.close(
        sim_other[pos],
        float(sim[other]),
        f"sim({other}, {pos}) dari `{shown_other}` (harus sama dengan sim({pos}, {other}))",
        inputs=shown,
    )


def offset_equals_pe_dot(c, d_model, dots) -> None:
    """offset_similarity(k, d_model) = PE(p)·PE(p + k) for every p. ``dots`` holds, per offset k, the
    pairs (p, PE(p)·PE(p + k)) of a sinusoidal table (base 10000), as data computed by the caller."""
    for k, pairs in dots:
        k = int(k)
        shown = f"offset_similarity({k}, {d_model})"
        value = c.call("offset_similarity", k, d_model)
        for p, dot in pairs:
            c.close(
                value,
                float(dot),
                f"keluaran dibanding PE({int(p)})·PE({int(p) + k}) dari tabel PE sinusoidal (base 10000)",
                inputs=shown,
            )


def attention_permutation_equivariant(c, x, perm) -> None:
    """Without positions, permuting the tokens permutes the output: self_attention(x[perm]) = self_attention(x)[perm]."""
    perm = np.asarray(perm, dtype=np.int64)
    shown = f"self_attention(x) dan self_attention(x[perm]) untuk x {tuple(x.shape)}, perm = {perm.tolist()}"
    out = c.array(
        c.call("self_attention", x), x.shape, f"keluaran `self_attention(x)` untuk x {tuple(x.shape)}"
    )
    out_perm = c.array(
        c.call("self_attention", x[perm]),
        x.shape,
        f"keluaran `self_attention(x[perm])` untuk x {tuple(x.shape)}",
    )
    c.close(
        out_perm,
        out[perm],
        "self_attention(x[perm]) (harus sama dengan self_attention(x)[perm]: tanpa informasi posisi, "
        "mengacak token hanya mengacak keluarannya)",
        inputs=shown,
    )


# -- 03_rotation ----------------------------------------------------------------------------------
def _short(value: np.ndarray) -> str:
    """A small array on one line (rounded, elided when long)."""
    return " ".join(np.array2string(np.asarray(value), precision=4, separator=", ", threshold=12).split())


def rotation_is_orthogonal(c, theta) -> None:
    """M(theta) M(theta)^T = I and det M(theta) = 1: a rotation keeps lengths and orientation."""
    shown = f"rotation_matrix({theta:.6g})"
    m = c.array(c.call("rotation_matrix", theta), (2, 2), f"keluaran `{shown}`")
    c.close(m @ m.T, np.eye(2), "M @ M.T (harus matriks identitas)", inputs=shown)
    c.close(np.linalg.det(m), 1.0, "determinan M (harus 1)", inputs=shown)


def rotation_turns_sin_cos_pair(c, a, theta) -> None:
    """M(theta) maps (sin a, cos a) to (sin(a + theta), cos(a + theta))."""
    shown = f"rotation_matrix({theta:.6g})"
    m = c.array(c.call("rotation_matrix", theta), (2, 2), f"keluaran `{shown}`")
    c.close(
        m @ np.array([np.sin(a), np.cos(a)]),
        np.array([np.sin(a + theta), np.cos(a + theta)]),
        f"M @ (sin a, cos a) untuk a = {a:.4g} (harus (sin(a + theta), cos(a + theta)); "
        "periksa letak tanda minus)",
        inputs=shown,
    )


def shift_moves_pe_rows(c, table, count, k) -> None:
    """``table`` holds rows 0 .. count+k-1 of a PE table: shift_encoding(table[:count], k) = table[k:k+count]."""
    shown = f"shift_encoding(PE[0:{count}], {k}) untuk d_model = {table.shape[1]}"
    c.close(
        c.call("shift_encoding", table[:count], k),
        table[k : k + count],
        f"keluaran (harus PE[{k}:{k + count}], baris PE yang digeser {k} posisi)",
        inputs=shown,
    )


def shift_keeps_norms(c, pe, k) -> None:
    """A rotation keeps the norm of every row."""
    shown = f"shift_encoding(pe {tuple(pe.shape)}, {k})"
    out = c.array(c.call("shift_encoding", pe, k), pe.shape, f"keluaran `{shown}`")
    c.close(
        np.linalg.norm(out, axis=-1),
        np.linalg.norm(pe, axis=-1),
        "norma tiap baris setelah digeser (rotasi tidak boleh mengubah panjang)",
        inputs=shown,
    )


def rope_keeps_norms(c, x) -> None:
    """apply_rope keeps the norm of every row, and leaves the row at position 0 as it is."""
    shown = f"apply_rope(x {tuple(x.shape)})"
    out = c.array(c.call("apply_rope", x), x.shape, f"keluaran `{shown}`")
    c.close(
        np.linalg.norm(out, axis=1),
        np.linalg.norm(x, axis=1),
        "norma tiap baris (rotasi tidak boleh mengubah panjang)",
        inputs=shown,
    )
    c.close(out[0], x[0], "baris di posisi 0 (sudut 0: tidak diputar)", inputs=shown)


def scores_constant_along_diagonals(c, v, w, length, v_dot_w) -> None:
    """The same content at every position: S is constant along every diagonal, and S[0, 0] is the
    plain dot product v · w (position 0 is not turned), given as data by the caller."""
    q, k = np.tile(v, (length, 1)), np.tile(w, (length, 1))
    shown = (
        f"rope_scores(q = {length} salinan v, k = {length} salinan w) dengan v = {_short(v)}, w = {_short(w)}"
    )
    scores = c.array(c.call("rope_scores", q, k), (length, length), f"keluaran `{shown}`")
    if not np.allclose(scores[1:, 1:], scores[:-1, :-1], rtol=1e-6, atol=1e-6):
        c.fail(
            f"Keluaran {shown} tidak konstan sepanjang diagonal (S[m+1, n+1] ≠ S[m, n]): skor RoPE harus "
            "hanya bergantung pada m - n. Putar q dan k dengan aturan yang sama.",
            input=shown,
        )
    c.close(
        scores[0, 0],
        float(v_dot_w),
        f"S[0, 0] (posisi 0 tidak diputar: harus v · w = {float(v_dot_w):.6g})",
        atol=1e-6,
        inputs=shown,
    )

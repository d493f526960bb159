"""Properties of the graded functions that hold without any reference solution.

Both sides run these: the hidden graders on their generated inputs, and the public check in the
student's kernel on the public inputs (this file ships with the release as
``public_checks/properties.py``; ``pe-course release`` copies it). So it imports NumPy only, and a
property receives ``c``, which offers ``call(fn, *args)`` (the student's result, or a failure
saying what went wrong), ``array(value, shape, what)``, ``close(actual, expected, what, inputs=...)``
and ``fail(message, input)`` — the graders' ``Grader`` and the public checker alike.
Messages are Indonesian; what a property enforces is a clause of the notebook's contract.
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
    """grad_tok[v] is the sum of grad_h[t] over every t with ids[t] == v; grad_pos[t] = grad_h[t] for t < T."""
    ids = np.asarray(ids, dtype=np.int64)
    shown = f"embed_backward({ids.tolist()}, grad_h {tuple(grad_h.shape)}, {vocab_size}, {block_size})"
    result = c.call("embed_backward", ids, grad_h, vocab_size, block_size)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        c.fail(f"`{shown}` harus mengembalikan dua nilai (grad_tok, grad_pos).", input=shown)
    d = grad_h.shape[1]
    grad_tok = c.array(result[0], (vocab_size, d), f"grad_tok dari `{shown}`")
    grad_pos = c.array(result[1], (block_size, d), f"grad_pos dari `{shown}`")
    for v in sorted(set(ids.tolist())):
        c.close(
            grad_tok[v],
            grad_h[ids == v].sum(axis=0),
            f"grad_tok[{v}] (id {v} muncul {int((ids == v).sum())} kali: jumlahkan semua gradiennya)",
            inputs=shown,
        )
    c.close(grad_pos[: len(ids)], grad_h, "grad_pos[:T] (harus sama dengan grad_h)", inputs=shown)


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


def scores_constant_along_diagonals(c, v, w, length) -> None:
    """The same content at every position: S is constant along every diagonal and S[0, 0] = v · w."""
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
        scores[0, 0], float(v @ w), "S[0, 0] (posisi 0 tidak diputar: harus v · w)", atol=1e-6, inputs=shown
    )

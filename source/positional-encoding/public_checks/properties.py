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

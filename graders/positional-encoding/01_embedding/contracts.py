"""The contract domains of 01_embedding's graded functions (``@domain``; what a domain is and who
checks it: ``_shared/contracts.py``).
"""

from __future__ import annotations

from pe_course.course.clauses import domain

from .._shared.contracts import ids_problem, is_integer, is_matrix


@domain
def embed(ids, tok_table, pos_table) -> str | None:
    if not (is_matrix(tok_table) and is_matrix(pos_table)) or tok_table.shape[1] != pos_table.shape[1]:
        return "tok_table (V, d) dan pos_table (block_size, d) harus matriks dengan d yang sama"
    return ids_problem(ids, tok_table.shape[0])  # T > block_size is in the contract: ValueError


@domain
def one_hot(ids, vocab_size) -> str | None:
    if not is_integer(vocab_size) or vocab_size < 1:
        return "vocab_size harus int positif"
    return ids_problem(ids, vocab_size)


@domain
def embed_backward(ids, grad_h, vocab_size, block_size) -> str | None:
    if not (is_integer(vocab_size) and is_integer(block_size)) or vocab_size < 1 or block_size < 1:
        return "vocab_size dan block_size harus int positif"
    if not is_matrix(grad_h) or grad_h.shape[0] != len(ids) or grad_h.shape[0] > block_size:
        return "grad_h harus (T, d) dengan T = len(ids) <= block_size"
    return ids_problem(ids, vocab_size)

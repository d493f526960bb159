"""The contract domains of 02_sinusoidal's graded functions (``@domain``; what a domain is and who
checks it: ``_shared/contracts.py``).
"""

from __future__ import annotations

from pe_course.course.clauses import domain

from .._shared.contracts import base_problem, is_integer


@domain
def frequencies(d_model, base=10000.0) -> str | None:
    if not is_integer(d_model) or d_model <= 0 or d_model % 2:
        return "d_model harus int genap positif"
    return base_problem(base)


@domain
def positional_encoding(length, d_model, base=10000.0) -> str | None:
    if not (is_integer(length) and is_integer(d_model)):
        return "length dan d_model harus int"  # negative / odd / zero: ValueError is in the contract
    return base_problem(base)

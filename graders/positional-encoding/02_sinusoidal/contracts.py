"""The domain of each of 02_sinusoidal's graded functions' contracts, as code (``@domain``).

The notebook states, clause by clause, which inputs each function must handle ("Ketentuan yang
dinilai"); the graders may only call a student's function with such inputs. A domain function
takes the call's arguments and returns ``None`` for an input the contract covers, or the reason
it does not. ``tests/test_contracts.py`` runs every check against the reference with a caller
that applies these, and samples every strategy far beyond what grading draws.
"""

from __future__ import annotations

from pe_course.contracts import domain

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

"""Building blocks of the notebooks' contract domains (``<notebook>/contracts.py``).

The notebooks state, clause by clause, which inputs each function must handle ("Ketentuan yang
dinilai"); the graders may only call a student's function with such inputs. A domain (``@domain``,
named as its graded function) takes the call's arguments and returns ``None`` for an input the
contract covers, or the reason it does not. ``tests/engine/test_contracts.py`` runs every check against the
reference with a caller that applies these, and samples every strategy far beyond what grading draws,
so a check or a strategy that strays outside the stated contract fails the tests.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)


def is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_matrix(value: Any) -> bool:
    return (
        isinstance(value, np.ndarray)
        and value.ndim == 2
        and value.dtype.kind in "iuf"
        and bool(np.all(np.isfinite(value)))
    )


def ids_problem(ids: Any, vocab: int) -> str | None:
    """K: ids is a Python list of ints or a 1-D int array, each id in 0 .. vocab - 1."""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            return "ids array harus int 1-D"
        values = ids.tolist()
    elif isinstance(ids, list):
        if not all(is_integer(i) for i in ids):
            return "ids list harus berisi int"
        values = ids
    else:
        return "ids harus list atau array"
    if any(not 0 <= i < vocab for i in values):
        return "ada id di luar 0 .. vocab_size - 1"
    return None


def base_problem(base: Any) -> str | None:
    return None if is_real(base) and base > 0 else "base harus bilangan positif"

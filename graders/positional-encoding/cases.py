"""Example cases stored as data in ``cases/<function>.json``.

Each case: ``{"name": ..., "args": [...], "kwargs": {...}, "public": true, "atol": 1e-6}``.
``public``: the case ships with the release, with its expected result computed from the reference
(``pe-course release`` writes ``public_checks/<notebook>.json``), and the public check in the
student's kernel runs it; every case, public or not, is also one of the hidden graders' inputs. An
argument written as ``{"array": [...], "dtype": "float64"}`` becomes a NumPy array; anything else is
passed as it is. Only inputs are stored: expected values come from the reference solution.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CASES_DIR = Path(__file__).parent / "cases"


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple
    public: bool
    kwargs: dict = field(default_factory=dict)
    tolerance: dict = field(default_factory=dict)  # rtol / atol when not the default


def _value(spec: Any) -> Any:
    if isinstance(spec, dict) and "array" in spec:
        arr = np.asarray(spec["array"], dtype=spec.get("dtype", "float64"))
        return arr.reshape(spec["shape"]) if "shape" in spec else arr
    return spec


@functools.cache
def cases(function: str) -> tuple[Case, ...]:
    data = json.loads((CASES_DIR / f"{function}.json").read_text(encoding="utf-8"))
    return tuple(
        Case(
            c["name"],
            tuple(_value(a) for a in c["args"]),
            bool(c.get("public", False)),
            {k: _value(v) for k, v in c.get("kwargs", {}).items()},
            {k: float(c[k]) for k in ("rtol", "atol") if k in c},
        )
        for c in data
    )


def run_cases(g, function: str) -> None:
    """Every case of ``function`` (public and hidden) compared with the reference."""
    for case in cases(function):
        g.expect(function, *case.args, **case.kwargs, **case.tolerance)

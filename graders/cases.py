"""Example cases stored as data in ``cases/<function>.json``.

Each case: ``{"name": ..., "args": [...], "public": true}`` (``public``: the case is also one of the
notebook's visible examples; every failing input is shown to the student either way). An argument written as
``{"array": [...], "dtype": "float64"}`` becomes a NumPy array; anything else is passed as it is.
Only inputs are stored: expected values come from the reference solution.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CASES_DIR = Path(__file__).parent / "cases"


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple
    public: bool


def _value(spec: Any) -> Any:
    if isinstance(spec, dict) and "array" in spec:
        return np.asarray(spec["array"], dtype=spec.get("dtype", "float64"))
    return spec


@functools.cache
def cases(function: str) -> tuple[Case, ...]:
    data = json.loads((CASES_DIR / f"{function}.json").read_text(encoding="utf-8"))
    return tuple(
        Case(c["name"], tuple(_value(a) for a in c["args"]), bool(c.get("public", False))) for c in data
    )

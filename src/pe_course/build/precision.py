"""Floats in committed files: what is stored, and when a stored file still matches a fresh build.

The last bits of ``sin``, ``cos``, ``exp``, ``**`` and of BLAS products depend on the CPU, on the SIMD
path NumPy dispatches to (``NPY_DISABLE_CPU_FEATURES``), on the OpenBLAS kernel and on the NumPy
version. Nothing committed depends on them:

- ``pe_tables.npz`` (and the PE tables the graders use as public inputs) is computed in exact decimal
  arithmetic by :mod:`pe_course.build.pe_tables`: the same bytes on every machine, compared byte for byte.
- The expected values of the public checks (``public_checks/<notebook>.json``, written by
  :mod:`pe_course.build.public_files`) are the reference's results with every float rounded to ``DIGITS``
  significant digits and ``|x| < FLOOR`` stored as ``0.0`` (:func:`stored`). Arguments are not
  rounded: they are the graders' own inputs (literals, exact tables), the very calls the graders make.
- A fresh build matches a committed file when its floats differ by at most one unit in the last stored
  digit, or are both within ``ATOL`` of 0 (:func:`same_file`): a value on the edge of a rounding step
  can land on either side on two machines. Everything else (text, integers, shapes, a value changed
  by more than that) must be equal: ``pe-course release --check``, ``python -m pe_course.build.pe_tables
  --check`` and the tests say "out of date" for a real change.

No other committed file holds a computed float to its last bits: the golden files of the tests
(``tests/e2e/test_demo/``, ``tests/record/test_record/``, ``tests/report/test_report_render/``) hold scores (sums of
declared points) and messages written from fixed inputs, with 6 significant digits or 4 decimals
(``public_checks.messages.brief``);
committed notebooks have no outputs; ``bench/results/`` are measurements, compared with nothing.

Tolerance budget: a stored expected value is within ``0.5 * 10**(1 - DIGITS)`` relative (5e-12) plus
``FLOOR`` (1e-12) of the reference's own. The public checks compare a student's value with it with
``rtol >= CHECK_RTOL`` and ``atol >= CHECK_ATOL`` (``public_checks.compare.assert_close``'s defaults;
a public case may widen them, :func:`covers` refuses a narrower one), so rounding moves a pass/fail
boundary by at most ``1 / MARGIN`` (1e-4) of the tolerance and the reference solution passes every
public check. ``tests/build/test_precision.py`` rebuilds the release with NumPy's SIMD dispatch restricted,
OpenBLAS's generic kernel and the oldest NumPy ``pyproject.toml`` allows.
"""

from __future__ import annotations

import json
import math
from typing import Any

DIGITS = 12  # significant digits of a stored float
FLOOR = 1e-12  # |x| below this is stored as 0.0 (noise around 0, e.g. cos(pi/2) computed two ways)
ATOL = 2 * FLOOR  # a value just above FLOOR on one machine may be 0.0 on another
CHECK_RTOL, CHECK_ATOL = 1e-6, 1e-8  # the narrowest tolerance a public case may compare with
MARGIN = 1e4  # the public checks' tolerance is at least this many times the storage error


def stored_float(x: float) -> float:
    """``x`` as committed: ``DIGITS`` significant digits, 0.0 below ``FLOOR`` (NaN and inf as they are)."""
    if not math.isfinite(x):
        return x
    if abs(x) < FLOOR:
        return 0.0
    return float(f"{x:.{DIGITS - 1}e}")


def stored(data: Any) -> Any:
    """JSON data with every float rounded by :func:`stored_float` (ints, bools and strings unchanged)."""
    if type(data) is float:
        return stored_float(data)
    if isinstance(data, dict):
        return {k: stored(v) for k, v in data.items()}
    if isinstance(data, list):
        return [stored(v) for v in data]
    return data


def covers(tolerance: dict) -> bool:
    """Whether a public case's ``rtol``/``atol`` (defaults when not given) leave room for the rounding."""
    rtol = tolerance.get("rtol", CHECK_RTOL)
    atol = tolerance.get("atol", CHECK_ATOL)
    return rtol >= MARGIN * 0.5 * 10.0 ** (1 - DIGITS) and atol >= MARGIN * FLOOR


def same_data(a: Any, b: Any) -> bool:
    """Two JSON values equal, floats within one stored digit (see the module's docstring)."""
    if type(a) is float or type(b) is float:
        if type(a) is not type(b):
            return False  # 4 and 4.0 differ: an int where a float was (or the other way) is a change
        if not (math.isfinite(a) and math.isfinite(b)):
            return a == b or (a != a and b != b)
        return _one_step(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_data(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _one_step(a: float, b: float) -> bool:
    """At most one unit apart in the last stored digit (stored values are whole units apart: 1.5 units
    leaves room for the float error of the subtraction), or both within ``ATOL`` of 0."""
    top = max(abs(a), abs(b))
    if top <= ATOL:
        return True
    unit = 10.0 ** (math.floor(math.log10(top)) - DIGITS + 1)
    return abs(a - b) <= 1.5 * unit


def same_file(name: str, a: bytes | None, b: bytes | None) -> bool:
    """Whether a committed file ``a`` still matches a fresh build ``b``: JSON by :func:`same_data`,
    anything else byte for byte."""
    if a is None or b is None or a == b:
        return a == b
    if not name.endswith(".json"):
        return False
    try:
        return same_data(json.loads(a), json.loads(b))
    except ValueError:
        return False

"""Comparing a student's result with the expected one: by its plain numbers, and its form where a
clause promises one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .messages import CheckFailed, Outcome, brief, no_value, number_text, show_call, untrusted


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------
def _kind(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"np.ndarray berbentuk {value.shape}"
    return type(value).__name__


def _is_real_scalar(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf"


NUMERIC_KINDS = (
    "biufc"  # bool, signed and unsigned integers, floats, complex: numbers as the checks read them
)


def plain_numbers(value: Any, depth: int = 0) -> bool:
    """Made of plain numbers only: exact ``bool``/``int``/``float``/``complex``/NumPy numbers, exact
    ``np.ndarray`` of numbers, exact lists and tuples of those (no subclass, nothing with its own
    ``__eq__`` or ``__array__``)."""
    if depth > 8:
        return False
    if type(value) in (bool, int, float, complex) or (
        isinstance(value, np.generic) and type(value).__module__ == "numpy"
    ):
        return np.asarray(value).dtype.kind in NUMERIC_KINDS
    if type(value) is np.ndarray:
        return value.dtype.kind in NUMERIC_KINDS
    if type(value) in (list, tuple):
        return all(plain_numbers(v, depth + 1) for v in value)
    return False


def _complex_part(value: Any) -> bool:
    """Holds a complex number whose imaginary part is not zero (not a real number)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        return False
    return arr.dtype.kind == "c" and bool(np.any(arr.imag != 0))


def _numbers(value: Any) -> np.ndarray | None:
    """``value`` as a float array, or None when it is not made of real numbers (see :func:`plain_numbers`):
    ``True``/``False`` read as 1 and 0, a complex number as its real part when its imaginary part is 0."""
    if not plain_numbers(value):
        return None
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        return None
    if arr.dtype.kind not in NUMERIC_KINDS:
        return None
    if arr.dtype.kind == "c":
        if np.any(arr.imag != 0):
            return None
        arr = arr.real
    return arr.astype(np.float64)


def _shape(value: Any) -> Any:
    """The shapes in a value (per element of a tuple or list), None where it holds no plain numbers."""
    if (
        isinstance(value, (tuple, list))
        and value
        and all(isinstance(v, (np.ndarray, tuple, list)) for v in value)
    ) and (isinstance(value, tuple) or any(isinstance(v, np.ndarray) for v in value)):
        return tuple(_shape(v) for v in value)
    arr = _numbers(value)
    return None if arr is None else arr.shape


def form_problem(actual: Any, expected: Any, shape: bool = False) -> str | None:
    """How ``actual``'s form differs from ``expected``'s (container, and shape when ``shape``), or None."""
    if isinstance(expected, tuple):
        if type(actual) is not tuple or len(actual) != len(expected):
            return f"harus berupa tuple berisi {len(expected)} nilai, tetapi didapat {_kind(actual)}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            problem = form_problem(a, e, shape)
            if problem:
                return f"elemen ke-{i} {problem}"
        return None
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            return f"harus berupa np.ndarray, tetapi didapat {_kind(actual)}"
        if shape and actual.shape != expected.shape:
            return f"harus berbentuk {expected.shape}, tetapi berbentuk {actual.shape}"
        return None
    if type(expected) is float and not (isinstance(actual, float) or type(actual) is int):
        return f"harus berupa float Python, tetapi didapat {_kind(actual)}"
    return None


def assert_close(
    actual: Any,
    expected: Any,
    what: str,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    inputs: str | None = None,
) -> None:
    """Compare a student's value with the expected one by its numbers: shape, finiteness, values.

    The container does not matter here (a nested list of the right numbers equals the array):
    :func:`form_problem` judges the form where a clause promises one. ``inputs`` (the call, as
    :func:`show_call` writes it) is named in every message.
    """
    where = f" untuk input {inputs}" if inputs else ""
    subject = what[:1].upper() + what[1:]

    def fail(message: str) -> CheckFailed:
        return CheckFailed(
            message, input=inputs or "", expected=lambda: brief(expected), obtained=lambda: brief(actual)
        )

    if isinstance(expected, tuple):
        if type(actual) not in (tuple, list) or len(actual) != len(expected):
            raise fail(
                f"{subject} harus berisi {len(expected)} nilai{where}, tetapi didapat {_kind(actual)}."
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_close(a, e, f"{what} (elemen ke-{i})", rtol, atol, inputs)
        return
    expected_arr = np.asarray(expected, dtype=np.float64)
    actual_arr = _numbers(actual)
    if actual_arr is None and plain_numbers(actual) and _complex_part(actual):
        raise fail(
            f"{subject} berisi bilangan kompleks{where}, padahal hasilnya bilangan real: kembalikan "
            "bagian real dan imajinernya sebagai bilangan real (misalnya disusun kembali sebagai kolom)."
        )
    if actual_arr is None:
        raise fail(f"{subject} harus berisi bilangan{where}, tetapi didapat {_kind(actual)}.")
    if actual_arr.shape != expected_arr.shape:
        raise fail(
            f"Bentuk {what} salah{where}: diharapkan {expected_arr.shape}, didapat {actual_arr.shape}."
        )
    if not np.all(np.isfinite(actual_arr)) and np.all(np.isfinite(expected_arr)):
        raise fail(
            f"{subject} mengandung NaN atau tak hingga{where}"
            " — periksa pembagian dengan nol atau overflow (misalnya exp dari bilangan besar)."
        )
    close = np.isclose(actual_arr, expected_arr, rtol=rtol, atol=atol)
    if close.all():
        return
    if expected_arr.ndim == 0:
        raise fail(
            f"Nilai {what} salah{where}: diharapkan {number_text(float(expected_arr))}, "
            f"didapat {number_text(float(actual_arr))}."
        )
    diff = np.where(close, 0.0, np.abs(actual_arr - expected_arr))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    at = tuple(int(i) for i in worst)
    message = (
        f"Nilai {what} salah{where}: {int((~close).sum())} dari {close.size} elemen berbeda; "
        f"selisih terbesar pada indeks {at}: diharapkan {number_text(float(expected_arr[worst]))}, "
        f"didapat {number_text(float(actual_arr[worst]))}."
    )
    if close.size <= 16:
        message += f" Seluruhnya: diharapkan {brief(expected_arr)}, didapat {brief(actual_arr)}."
    raise fail(message)


def close_enough(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    try:
        assert_close(a, b, "nilai", rtol=rtol, atol=atol)
    except CheckFailed:
        return False
    return True


def same_values(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    """Two results hold the same numbers (NaN equal to NaN): for telling which wrong implementation a
    student's results match, where both may be NaN (an unstable softmax on huge scores)."""
    parts = isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
    if parts and all(isinstance(v, (np.ndarray, tuple, list)) for v in (*a, *b)):
        return all(same_values(x, y, rtol, atol) for x, y in zip(a, b, strict=True))
    x, y = _numbers(a), _numbers(b)
    if x is None or y is None or x.shape != y.shape:
        return False
    return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def as_array(value: Any, shape: tuple, what: str) -> np.ndarray:
    """``value`` as a float array of exactly ``shape`` (for properties that compute with it). A wrong
    shape is a failure of kind "shape": charged to the function's form clause when that clause
    promises the shape (one mistake, one clause), else to the property's own clause."""
    arr = _numbers(value)
    if arr is None and plain_numbers(value) and _complex_part(value):
        raise CheckFailed(
            f"{what} berisi bilangan kompleks, padahal hasilnya bilangan real.", obtained=_kind(value)
        )
    if arr is None:
        raise CheckFailed(
            f"{what} harus berisi bilangan, tetapi didapat {_kind(value)}.", obtained=_kind(value)
        )
    if arr.shape != tuple(shape):
        raise CheckFailed(
            f"Bentuk {what} salah: diharapkan {tuple(shape)}, didapat {arr.shape}.",
            obtained=str(arr.shape),
            expected=str(tuple(shape)),
            kind="shape",
        )
    return arr


def judge(
    fn: str,
    args: tuple,
    kwargs: Mapping[str, Any],
    outcome: Outcome,
    expected: Outcome,
    *,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    what: str | None = None,
    form_shape: bool | None = None,
) -> list[CheckFailed]:
    """What is wrong with a student's ``outcome`` of ``fn(*args, **kwargs)`` against ``expected``.

    ``form_shape``: None when the function's form is not graded; False when the form clause
    promises the container only, True when it also promises the shape. A wrong form is reported
    beside (not instead of) wrong values.
    """
    failures = _judge(fn, args, kwargs, outcome, expected, rtol, atol, what, form_shape)
    for f in failures:
        f.must_raise = expected.kind == "raised"
    return failures


def _compared(value: Any, expected: Any, form_shape: bool | None) -> Any:
    """The value compared with ``expected``: one number in an array is the form clause's concern
    (when there is one), its value is compared as a number."""
    if (
        form_shape is not None
        and _is_real_scalar(expected)
        and isinstance(value, np.ndarray)
        and value.size == 1
    ):
        return value.reshape(())
    return value


def _same_shaped_parts(value: Any, expected: Any) -> list[tuple[int, Any, Any]]:
    """The parts of a result of several parts (a tuple, or a list in its place) whose shape is the
    expected part's: what can still be compared when another part has the wrong shape."""
    if not isinstance(expected, tuple) or type(value) not in (tuple, list) or len(value) != len(expected):
        return []
    return [(i, v, e) for i, (v, e) in enumerate(zip(value, expected, strict=True)) if _shape(v) == _shape(e)]


def _passes(outcome: Outcome, expected: Outcome, rtol: float, atol: float, form_shape: bool | None) -> bool:
    if expected.kind == "raised":
        return outcome.kind == "raised" and outcome.error == expected.error
    if not outcome.ok or (form_shape is not None and form_problem(outcome.value, expected.value, form_shape)):
        return False
    try:
        assert_close(_compared(outcome.value, expected.value, form_shape), expected.value, "", rtol, atol)
    except CheckFailed:
        return False
    return True


def _judge(fn, args, kwargs, outcome, expected, rtol, atol, what, form_shape) -> list[CheckFailed]:
    if _passes(outcome, expected, rtol, atol, form_shape):
        return []  # the common case, without writing out the call for a message
    shown = show_call(fn, args, kwargs)
    if expected.kind == "raised":  # the right exception passed above
        if outcome.kind == "raised" and outcome.error != "NotImplementedError":
            return [
                CheckFailed(
                    f"`{fn}` seharusnya melempar {expected.error} untuk input {shown}, tetapi melempar "
                    f"{untrusted(outcome.error)}"
                    + (f": {untrusted(outcome.message)}" if outcome.message else "."),
                    input=shown,
                    expected=expected.error,
                    obtained=untrusted(outcome.error),
                    kind="no-value",
                    call=(fn, tuple(args), dict(kwargs)),
                    outcome=outcome,
                )
            ]
        if outcome.kind == "value":
            return [
                CheckFailed(
                    f"`{fn}` seharusnya melempar {expected.error} untuk input {shown}, tetapi mengembalikan "
                    f"{brief(outcome.value)}.",
                    input=shown,
                    expected=expected.error,
                    obtained=brief(outcome.value),
                )
            ]
        return [no_value(fn, outcome, args, kwargs, expected=expected.error)]
    if not outcome.ok:
        return [no_value(fn, outcome, args, kwargs, expected=brief(expected.value))]
    failures = []
    if form_shape is not None:
        problem = form_problem(outcome.value, expected.value, form_shape)
        if problem:
            failures.append(
                CheckFailed(
                    f"Keluaran `{fn}` {problem} (input {shown}).",
                    input=shown,
                    expected=brief(expected.value),
                    obtained=_kind(outcome.value),
                    kind="form",
                )
            )
            if form_shape and _shape(outcome.value) != _shape(expected.value):
                parts = _same_shaped_parts(outcome.value, expected.value)
                if (
                    parts
                ):  # the shape is the form clause's promise: only the parts of the right shape compared
                    for i, part, expected_part in parts:
                        try:
                            assert_close(
                                part,
                                expected_part,
                                f"{what or f'keluaran `{fn}`'} (elemen ke-{i})",
                                rtol,
                                atol,
                                shown,
                            )
                        except CheckFailed as exc:
                            failures.append(exc)
                    return failures
    value = _compared(outcome.value, expected.value, form_shape)
    try:
        assert_close(value, expected.value, what or f"keluaran `{fn}`", rtol, atol, shown)
    except CheckFailed as exc:
        failures.append(exc)
    return failures

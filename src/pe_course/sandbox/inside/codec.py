"""JSON encoding of call arguments and results between the grader and the sandboxed worker.

No pickle: only plain numeric arrays, numbers, booleans, None, strings, lists and tuples cross the
boundary. :func:`decode_untrusted` is what the grader applies to anything the worker sends back;
it rebuilds plain ``numpy.ndarray`` objects from bytes and refuses everything else, so nothing a
submission returns can run code or override comparisons in the grader process.

This module must stay importable with the standard library and numpy only: it is copied into
the sandbox next to the worker.
"""

from __future__ import annotations

import base64
import json
import math

# Bound when the worker starts, before student code runs: a submission that patches builtins or
# numpy attributes (``builtins.isinstance = ...``, ``numpy.ndarray = ...``) cannot change how its
# other functions' results are encoded here.
from builtins import (  # noqa: UP029
    bool,
    complex,
    dict,
    float,
    int,
    isinstance,
    len,
    list,
    repr,
    set,
    str,
    tuple,
    type,
)
from typing import Any

import numpy as np

_ndarray, _generic, _dtype, _frombuffer = np.ndarray, np.generic, np.dtype, np.frombuffer
_dumps, _loads = json.dumps, json.loads

# dtype kinds that may cross: bool, signed and unsigned integers, floats, complex numbers.
ALLOWED_KINDS = frozenset("biufc")
MAX_ITEMS = 20_000_000
MAX_DEPTH = 8


class DecodeError(ValueError):
    """The worker sent something that is not a plain numeric value."""


def encode(value: Any, _depth: int = 0) -> Any:
    """Turn a value into JSON-compatible data; raise TypeError for anything not allowed."""
    if _depth > MAX_DEPTH:
        raise TypeError("nilai terlalu dalam bersarang")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if type(value) is complex:
        return {"__complex__": [encode(value.real, _depth + 1), encode(value.imag, _depth + 1)]}
    if type(value) is _ndarray:
        return _encode_array(value)
    if isinstance(value, _generic) and type(value).__module__ == "numpy":
        return _encode_array(_ndarray((), value.dtype, value.tobytes()), scalar=True)
    if type(value) is tuple:
        return {"__tuple__": [encode(v, _depth + 1) for v in value]}
    if type(value) is list:
        return [encode(v, _depth + 1) for v in value]
    raise TypeError(f"tipe {type(value).__name__} tidak didukung")


def _encode_array(arr: np.ndarray, scalar: bool = False) -> dict:
    if arr.dtype.kind not in ALLOWED_KINDS:
        raise TypeError(f"array dengan dtype {arr.dtype} tidak didukung (hanya bilangan)")
    return {
        "__ndarray__": arr.dtype.str,
        "shape": list(arr.shape),
        "scalar": scalar,
        "data": base64.b64encode(arr.tobytes(order="C")).decode("ascii"),
    }


def dumps(value: Any) -> str:
    return _dumps(value, separators=(",", ":"), allow_nan=False)


def decode_untrusted(data: Any, _depth: int = 0) -> Any:
    """Rebuild a value from JSON data sent by untrusted code. Raises DecodeError."""
    if _depth > MAX_DEPTH:
        raise DecodeError("nilai terlalu dalam bersarang")
    if data is None or isinstance(data, (bool, str)):
        return data
    if type(data) is int:
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        return [decode_untrusted(v, _depth + 1) for v in data]
    if type(data) is dict:
        if set(data) == {"__tuple__"} and type(data["__tuple__"]) is list:
            return tuple(decode_untrusted(v, _depth + 1) for v in data["__tuple__"])
        if set(data) == {"__float__"} and data["__float__"] in ("nan", "inf", "-inf"):
            return float(data["__float__"])
        if (
            set(data) == {"__complex__"}
            and type(data["__complex__"]) is list
            and len(data["__complex__"]) == 2
        ):
            real, imag = (decode_untrusted(v, _depth + 1) for v in data["__complex__"])
            if type(real) is float and type(imag) is float:
                return complex(real, imag)
        if set(data) == {"__ndarray__", "shape", "scalar", "data"}:
            return _decode_array(data)
    raise DecodeError("bentuk data tidak dikenal")


def _decode_array(data: dict) -> Any:
    dtype_str, shape, scalar, payload = data["__ndarray__"], data["shape"], data["scalar"], data["data"]
    if type(dtype_str) is not str or type(payload) is not str or type(scalar) is not bool:
        raise DecodeError("array rusak")
    if type(shape) is not list or len(shape) > 8 or not all(type(n) is int and n >= 0 for n in shape):
        raise DecodeError("bentuk array tidak sah")
    try:
        dtype = _dtype(dtype_str)
    except TypeError as exc:
        raise DecodeError("dtype tidak sah") from exc
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise DecodeError(f"dtype {dtype} tidak didukung")
    count = math.prod(shape)
    if count > MAX_ITEMS:
        raise DecodeError("array terlalu besar")
    try:
        raw = base64.b64decode(payload, validate=True)
    except ValueError as exc:
        raise DecodeError("data array rusak") from exc
    if len(raw) != count * dtype.itemsize:
        raise DecodeError("ukuran data array tidak cocok dengan bentuknya")
    arr = _frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if scalar:
        if arr.shape != ():
            raise DecodeError("skalar rusak")
        return arr[()]
    return arr


def loads_untrusted(line: bytes | str) -> Any:
    """Parse one JSON message from the worker (structure only; values stay encoded)."""
    try:
        return _loads(line)
    except (ValueError, RecursionError) as exc:
        raise DecodeError("pesan dari proses siswa tidak dapat dibaca") from exc

"""The vocabulary the hidden graders in ``graders/`` are written in.

A grader module declares checks and misconceptions with decorators::

    @check("embed", "contoh-bab", points=1, title="Contoh dari bab")
    def chapter_examples(g: Grader) -> None:
        for case in cases("embed"):
            g.expect("embed", *case.args, public=True)

    @misconception("embed", "missing-position", hint="Jangan lupa menambahkan pos_table[t].")
    def embed_without_position(ids, tok_table, pos_table):
        '''Only the token lookup; the position row is never added.'''
        return tok_table[np.asarray(ids, dtype=int)]

Each check belongs to one graded function and so to its test cell ``test_<function>``; the cell's
score is the sum of the points of its passed checks. ``Grader`` calls the student's function (in the
sandbox), the reference (in this process) and compares them; every comparison goes through
:func:`assert_close`, whose messages say in Bahasa Indonesia what is wrong.
"""

from __future__ import annotations

import copy
import functools
import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .student import Outcome


# --------------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    function: str
    name: str
    points: float
    title: str
    run: Callable[[Grader], None]

    @property
    def cell(self) -> str:
        return f"test_{self.function}"


@dataclass(frozen=True)
class Misconception:
    function: str
    id: str
    hint: str
    implementation: Callable[..., Any]

    @property
    def description(self) -> str:
        return (self.implementation.__doc__ or "").strip()


def check(function: str, name: str, points: float, title: str):
    """Declare a check of ``function`` worth ``points`` (stable ``name``, Indonesian ``title``)."""

    def wrap(fn: Callable[[Grader], None]):
        fn.__pe_check__ = Check(function, name, float(points), title, fn)
        return fn

    return wrap


def misconception(function: str, id: str, hint: str):  # noqa: A002 (the catalogue's word)
    """Declare a documented wrong implementation of ``function`` with a hint for students."""

    def wrap(fn: Callable[..., Any]):
        fn.__pe_misconception__ = Misconception(function, id, hint, fn)
        return fn

    return wrap


@functools.cache
def draw(strategy_factory: Callable[[], Any], n: int) -> tuple:
    """``n`` deterministic examples of a hypothesis strategy (cached per process).

    Derandomized and database-free, so a re-grade sees exactly the same inputs.
    """
    from hypothesis import HealthCheck, Phase, given, settings

    out: list = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy_factory())
    def collect(example):
        if len(out) < n:
            out.append(example)

    collect()
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Running checks
# --------------------------------------------------------------------------------------------
class CheckFailed(Exception):
    """A check did not pass; the message is shown to the student."""


class Caller(Protocol):
    def call(self, fn: str, *args: Any, **kwargs: Any) -> Outcome: ...


@dataclass
class CallRecord:
    fn: str
    args: tuple
    kwargs: dict
    outcome: Outcome


def reference_outcome(func: Callable[..., Any], args: tuple, kwargs: dict) -> Outcome:
    """Call trusted code on private copies of the arguments and wrap the result as an Outcome."""
    try:
        value = func(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    except Exception as exc:  # noqa: BLE001 (reference or catalogued variant raising is an outcome)
        return Outcome("raised", error=type(exc).__name__, message=str(exc))
    return Outcome("value", value=value)


@dataclass
class Grader:
    """What a check function receives: the student's functions, the reference, and helpers."""

    student: Caller
    reference: dict[str, Callable[..., Any]]
    log: list[CallRecord] = field(default_factory=list)

    # -- calling -----------------------------------------------------------------------------
    def ref(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """The reference solution's result (trusted; arguments are copied first)."""
        return self.reference[fn](*copy.deepcopy(args), **copy.deepcopy(kwargs))

    def outcome(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        outcome = self.student.call(fn, *args, **kwargs)
        self.log.append(CallRecord(fn, args, kwargs, outcome))
        return outcome

    def call(self, fn: str, *args: Any, public: bool = False, **kwargs: Any) -> Any:
        """The student's result, or CheckFailed saying what went wrong."""
        outcome = self.outcome(fn, *args, **kwargs)
        if not outcome.ok:
            raise CheckFailed(describe_failure(fn, outcome, args if public else None, kwargs))
        return outcome.value

    # -- comparing ---------------------------------------------------------------------------
    def expect(self, fn: str, *args: Any, public: bool = False, rtol: float = 1e-6, atol: float = 1e-8,
               what: str | None = None, **kwargs: Any) -> Any:
        """The student's ``fn(*args)`` must behave like the reference: same value or same exception."""
        expected = reference_outcome(self.reference[fn], args, kwargs)
        if expected.kind == "raised":
            self.expect_raises(fn, expected.error, *args, public=public, **kwargs)
            return None
        actual = self.call(fn, *args, public=public, **kwargs)
        assert_close(actual, expected.value, what=what or f"keluaran `{fn}`", rtol=rtol, atol=atol,
                     inputs=_show_inputs(args, kwargs) if public else None)
        return actual

    def expect_raises(self, fn: str, error: str, *args: Any, public: bool = False, **kwargs: Any) -> None:
        outcome = self.outcome(fn, *args, **kwargs)
        where = f" untuk input {_show_inputs(args, kwargs)}" if public else ""
        if outcome.kind == "raised" and outcome.error == error:
            return
        if outcome.kind == "raised" and outcome.error != "NotImplementedError":
            raise CheckFailed(f"`{fn}` seharusnya melempar {error}{where}, tetapi melempar {untrusted(outcome.error)}.")
        if outcome.kind == "value":
            raise CheckFailed(f"`{fn}` seharusnya melempar {error}{where}, tetapi malah mengembalikan nilai.")
        raise CheckFailed(describe_failure(fn, outcome, args if public else None, kwargs))


def _show_inputs(args: tuple, kwargs: dict) -> str:
    parts = [_short_repr(a) for a in args] + [f"{k}={_short_repr(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _short_repr(value: Any) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=4, suppress_small=True, separator=", ", threshold=40)
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def untrusted(text: str) -> str:
    """Text that came from student code, made inert for the Markdown/HTML feedback (no tags, no links)."""
    text = html.escape(str(text), quote=True)
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)


def describe_failure(fn: str, outcome: Outcome, args: tuple | None = None, kwargs: dict | None = None) -> str:
    """Indonesian sentence for a call that did not return a usable value."""
    where = f" untuk input {_show_inputs(args, kwargs or {})}" if args is not None else ""
    if outcome.kind == "raised":
        if outcome.error == "NotImplementedError":
            return f"`{fn}` belum diimplementasikan (masih `raise NotImplementedError()`)."
        detail = f": {untrusted(outcome.message)}" if outcome.message else ""
        return f"`{fn}` melempar {untrusted(outcome.error)}{where}{detail}"
    if outcome.kind == "timeout":
        return (f"`{fn}` tidak selesai dalam batas waktu{where} — periksa apakah ada perulangan "
                "yang tidak pernah berhenti.")
    if outcome.kind == "crashed":
        return (f"Proses berhenti saat menjalankan `{fn}`{where} (misalnya memori habis, `os._exit`, "
                "atau `sys.exit`). Fungsi harus mengembalikan nilai.")
    if outcome.kind == "missing":
        if outcome.message == "not-callable":
            return f"`{fn}` ada di notebook, tetapi bukan fungsi."
        return f"Fungsi `{fn}` tidak ditemukan di notebook. Pastikan namanya tepat `{fn}`."
    return (f"Keluaran `{fn}` bukan array NumPy atau bilangan biasa ({untrusted(outcome.message)}). "
            "Kembalikan `np.ndarray` atau bilangan, bukan objek lain.")


def assert_close(actual: Any, expected: Any, what: str, rtol: float = 1e-6, atol: float = 1e-8,
                 inputs: str | None = None) -> None:
    """Compare a student's value with the expected one: type, shape, finiteness, then values.

    ``inputs`` (only for public-style cases) adds the input and the expected value to the message.
    """
    where = f" untuk input {inputs}" if inputs else ""
    if isinstance(expected, tuple):
        if not isinstance(actual, tuple) or len(actual) != len(expected):
            raise CheckFailed(f"{what} harus berupa tuple berisi {len(expected)} nilai{where}, "
                              f"tetapi didapat {_kind(actual)}.")
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_close(a, e, f"{what} (elemen ke-{i})", rtol, atol, inputs)
        return
    expected_arr = np.asarray(expected, dtype=np.float64)
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            raise CheckFailed(f"{what} harus berupa np.ndarray{where}, tetapi didapat {_kind(actual)}.")
    elif not _is_real_scalar(actual):
        raise CheckFailed(f"{what} harus berupa satu bilangan{where}, tetapi didapat {_kind(actual)}.")
    actual_arr = np.asarray(actual)
    if actual_arr.shape != expected_arr.shape:
        raise CheckFailed(f"Bentuk {what} salah{where}: diharapkan {expected_arr.shape}, "
                          f"didapat {actual_arr.shape}.")
    if actual_arr.dtype.kind not in "biuf":
        raise CheckFailed(f"{what} harus berisi bilangan, bukan dtype {actual_arr.dtype}.")
    actual_arr = actual_arr.astype(np.float64)
    if not np.all(np.isfinite(actual_arr)) and np.all(np.isfinite(expected_arr)):
        raise CheckFailed(f"{what} mengandung NaN atau tak hingga{where}"
                          " — periksa pembagian dengan nol atau overflow (misalnya exp dari bilangan besar).")
    close = np.isclose(actual_arr, expected_arr, rtol=rtol, atol=atol)
    if close.all():
        return
    diff = np.where(close, 0.0, np.abs(actual_arr - expected_arr))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    message = (f"Nilai {what} salah{where}: {int((~close).sum())} dari {close.size} elemen berbeda "
               f"(selisih terbesar {float(diff.max()):.4g}")
    message += f" pada indeks {tuple(int(i) for i in worst)})." if worst else ")."
    if inputs:
        message += f" Diharapkan {_short_repr(expected_arr)}, didapat {_short_repr(actual_arr)}."
    raise CheckFailed(message)


def require_shape(value: Any, shape: tuple, what: str) -> np.ndarray:
    """``value`` as a float array of exactly ``shape`` (for property checks that compute with it)."""
    if not isinstance(value, np.ndarray):
        raise CheckFailed(f"{what} harus berupa np.ndarray, tetapi didapat {_kind(value)}.")
    if value.shape != tuple(shape):
        raise CheckFailed(f"Bentuk {what} salah: diharapkan {tuple(shape)}, didapat {value.shape}.")
    if value.dtype.kind not in "biuf":
        raise CheckFailed(f"{what} harus berisi bilangan, bukan dtype {value.dtype}.")
    return value.astype(np.float64)


def _is_real_scalar(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf"


def _kind(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"np.ndarray berbentuk {value.shape}"
    return type(value).__name__


# --------------------------------------------------------------------------------------------
# Misconception diagnosis
# --------------------------------------------------------------------------------------------
def same_outcome(a: Outcome, b: Outcome, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind == "raised":
        return a.error == b.error
    if a.kind != "value":
        return False
    try:
        assert_close(a.value, b.value, "nilai", rtol=rtol, atol=atol)
    except CheckFailed:
        return False
    return True


def diagnose(log: Iterable[CallRecord], candidates: Iterable[Misconception],
             reference: dict[str, Callable[..., Any]]) -> list[Misconception]:
    """Misconceptions whose wrong implementation explains every call that tells it from the reference.

    A call *tells them apart* when the reference and the wrong variant behave differently on it;
    a misconception is diagnosed when there is at least one such call and on each of them the
    student's function behaved like the variant.
    """
    log = list(log)
    found = []
    for m in candidates:
        telling = 0
        for rec in log:
            if rec.fn != m.function or rec.outcome.kind not in ("value", "raised"):
                continue
            variant = reference_outcome(m.implementation, rec.args, rec.kwargs)
            if same_outcome(variant, reference_outcome(reference[m.function], rec.args, rec.kwargs)):
                continue
            telling += 1
            if not same_outcome(rec.outcome, variant):
                break
        else:
            if telling:
                found.append(m)
    return found


class InProcessCaller:
    """Calls trusted functions directly, with the same encode/decode round trip as the sandbox.

    For the graders' own self-validation (reference, catalogued misconceptions, alternative
    correct implementations); student code always goes through ``student.StudentProcess``.
    """

    def __init__(self, functions: dict[str, Callable[..., Any]]) -> None:
        self.functions = functions

    def status(self, fn: str) -> str:
        return "ok" if callable(self.functions.get(fn)) else "missing"

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        from . import codec

        if self.status(fn) != "ok":
            return Outcome("missing", message="missing")
        args = codec.decode_untrusted(codec.encode(list(args)))
        kwargs = {k: codec.decode_untrusted(codec.encode(v)) for k, v in kwargs.items()}
        outcome = reference_outcome(self.functions[fn], tuple(args), kwargs)
        if outcome.kind != "value":
            return outcome
        try:
            return Outcome("value", value=codec.decode_untrusted(codec.encode(outcome.value)))
        except (TypeError, codec.DecodeError) as exc:
            return Outcome("invalid", message=str(exc))

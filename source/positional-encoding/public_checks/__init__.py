"""Checks a student can run before submitting, and the rule that charges every lost point once.

This module is the one code path for what a student reads about a check: the comparisons and
their Indonesian messages, and the rule that decides which requirement (clause ``K1``, ``K2``, ...
of a function's "Ketentuan yang dinilai") a failure is charged to. The hidden graders
(``pe_course.checks``) use it while grading; a copy of it ships with every release as
``public_checks/__init__.py``, beside the notebooks, where each ``test_<function>`` cell runs it in
the student's kernel::

    from public_checks import check_function
    check_function("embed", embed)

It must stay importable with the standard library and NumPy only.

**The charging rule.** A clause is the unit of credit: it earns its points when nothing is charged
to it, and loses all of them (once) otherwise.

- A result of the wrong form (a list where the notebook promises an ``np.ndarray``, a tuple of
  another length, a shape the form clause states) is charged to the function's *form* clause, and
  its values are still compared; a function without one has its values compared whatever their form.
- Every input is *ordinary* or belongs to the narrower classes of input the clauses name (a Python
  list, ``T = 0``, ``T = block_size``, ``base`` given, ``k`` negative, ...), the first in the
  graders' order being *its* class. A wrong result or an error on an ordinary input is charged to the
  base clause (K1). On an input of a narrower class it is charged to that class's clause, unless it
  is the same mistake as on the class's *twin*, the nearest input without that feature (the same
  ids as an array, a table one row longer, the default ``base``): then it is charged where the
  twin's failure is. It is the same mistake when the function's results on the input and its twin
  relate as the reference's do (equal where the reference gives equal results, different where it
  gives different ones, both wrong), or when both raise the same error and the narrower clause has
  other inputs the function gets right.
- A property the notebook states (norms kept, one-hot times table equals lookup, ...) that does not
  hold is charged to the clause the check names; a call inside it that gave no value is charged as
  above.
"""

from __future__ import annotations

import copy
import html
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BASE_CLAUSE = "K1"


# --------------------------------------------------------------------------------------------
# Showing values
# --------------------------------------------------------------------------------------------
def _number(x: float) -> str:
    """A float as people write it: 6 significant digits, a whole number keeps its ".0" (so ``base=10.0``
    reads as a float, not an int)."""
    text = f"{x:.6g}"
    return text + ".0" if text.lstrip("-").isdigit() else text


def brief(value: Any) -> str:
    """A value as one short line (arrays rounded and elided, marked ``np.array(...)`` so they read apart
    from Python lists), for messages.

    Only plain values are formatted; anything else is named by its type (never its own ``repr``).
    """
    if type(value) is np.ndarray and value.dtype.kind in "biuf":
        if value.size == 0:
            text = f"array berbentuk {value.shape}"
        elif value.ndim == 0:
            text = f"np.array({brief(value.item())})"
        else:
            body = np.array2string(value, precision=4, suppress_small=True, separator=", ", threshold=40)
            text = f"np.array({body})"
    elif type(value) in (tuple, list) and len(value) <= 20:
        inner = ", ".join(brief(v) for v in value)
        text = f"({inner}{',' if len(value) == 1 else ''})" if type(value) is tuple else f"[{inner}]"
    elif type(value) is float or isinstance(value, np.floating):
        text = _number(float(value))
    elif type(value) in (int, bool) or value is None or isinstance(value, np.integer):
        text = repr(value.item() if isinstance(value, np.generic) else value)
    else:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def show_call(fn: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """``fn(arg, ..., key=value)`` with arrays shown compactly (bounded length)."""
    parts = [brief(a) for a in args] + [f"{k}={brief(v)}" for k, v in kwargs.items()]
    return f"{fn}(" + ", ".join(parts) + ")"


def untrusted(text: str) -> str:
    """Text that came from student code, made inert for Markdown/HTML (no tags, no links)."""
    text = html.escape(str(text), quote=True)
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)


def plain(markdown: str) -> str:
    """A message as plain text: bold markers, backticks and the escapes of :func:`untrusted` removed
    (code spans keep what they hold, ``base ** 2`` included)."""
    markdown = markdown.replace("\\`", "\x00")  # an escaped backtick (student text) is not a code span
    parts = re.split(r"(`[^`]*`)", markdown)
    for i, part in enumerate(parts):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            parts[i] = part[1:-1]
        else:
            parts[i] = re.sub(r"\\([\\`*_{}\[\]()#+!|~])", r"\1", part.replace("**", ""))
    return html.unescape("".join(parts)).replace("\x00", "`")


# --------------------------------------------------------------------------------------------
# Calls and their failures
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What happened when a student's function was called once."""

    kind: str  # value | raised | timeout | crashed | limit (a resource-group limit) | missing | invalid
    value: Any = None
    error: str = ""  # exception class name (kind == raised), untrusted text
    message: str = ""  # untrusted text, already shortened

    @property
    def ok(self) -> bool:
        return self.kind == "value"


def call_outcome(func: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]) -> Outcome:
    """Call ``func`` on private copies of the arguments; its value, or the error it raised."""
    try:
        with np.errstate(all="ignore"):
            value = func(*copy.deepcopy(args), **copy.deepcopy(dict(kwargs)))
    except Exception as exc:  # noqa: BLE001 (an error raised is an outcome like a value)
        return Outcome("raised", error=type(exc).__name__, message=str(exc)[:300])
    return Outcome("value", value=value)


class CheckFailed(Exception):
    """A comparison or a stated property did not hold; the message is shown to the student.

    ``kind``: "value" (wrong values or shape), "form" (a result of another form than the form clause
    promises) or "no-value" (the call raised, timed out, crashed, ...; ``call`` and ``outcome`` say
    which). ``input``, ``expected`` and ``obtained`` are short texts kept apart for the record.
    """

    def __init__(
        self,
        message: str,
        *,
        input: str = "",
        expected: str = "",
        obtained: str = "",
        kind: str = "value",
        call: tuple[str, tuple, dict] | None = None,
        outcome: Outcome | None = None,
    ) -> None:
        super().__init__(message)
        self.input, self.expected, self.obtained = input, expected, obtained
        self.kind, self.call, self.outcome = kind, call, outcome
        self.must_raise = False  # the reference raises on this input (set by judge)


def obtained_text(outcome: Outcome) -> str:
    if outcome.kind == "raised":
        return untrusted(outcome.error)
    return {
        "timeout": "batas waktu terlampaui",
        "crashed": "proses berhenti",
        "limit": outcome.message,
        "missing": "fungsi tidak ada",
        "invalid": "bukan nilai numerik",
    }.get(outcome.kind, outcome.kind)


def describe_failure(
    fn: str, outcome: Outcome, args: tuple | None = None, kwargs: Mapping | None = None
) -> str:
    """Indonesian sentence for a call that did not return a usable value."""
    where = f" untuk input {show_call(fn, args, kwargs or {})}" if args is not None else ""
    if outcome.kind == "raised":
        if outcome.error == "NotImplementedError":
            return f"`{fn}` belum ditulis (masih `raise NotImplementedError(...)`)."
        detail = f": {untrusted(outcome.message)}" if outcome.message else ""
        return f"`{fn}` melempar {untrusted(outcome.error)}{where}{detail}"
    if outcome.kind == "timeout":
        return (
            f"`{fn}` tidak selesai dalam batas waktu{where} — periksa apakah ada perulangan "
            "yang tidak pernah berhenti."
        )
    if outcome.kind == "limit":
        return (
            f"`{fn}` melewati batas sumber daya{where}: {outcome.message}. Semua proses yang dimulai "
            "kode Anda berbagi batas memori, jumlah proses/thread, waktu CPU dan berkas."
        )
    if outcome.kind == "crashed":
        return (
            f"Proses berhenti saat menjalankan `{fn}`{where} (misalnya memori habis, `os._exit`, "
            "atau `sys.exit`). Fungsi harus mengembalikan nilai."
        )
    if outcome.kind == "missing":
        if outcome.message == "not-callable":
            return f"`{fn}` ada di notebook, tetapi bukan fungsi."
        return f"Fungsi `{fn}` tidak ditemukan di notebook. Pastikan namanya tepat `{fn}`."
    return (
        f"Keluaran `{fn}` bukan array NumPy atau bilangan biasa ({untrusted(outcome.message)}). "
        "Kembalikan `np.ndarray` atau bilangan, bukan objek lain."
    )


def no_value(
    fn: str, outcome: Outcome, args: tuple, kwargs: Mapping[str, Any], expected: str = ""
) -> CheckFailed:
    """The failure of a call that gave no usable value (raised, timed out, crashed, ...)."""
    return CheckFailed(
        describe_failure(fn, outcome, args, kwargs),
        input=show_call(fn, args, kwargs),
        expected=expected,
        obtained=obtained_text(outcome),
        kind="no-value",
        call=(fn, tuple(args), dict(kwargs)),
        outcome=outcome,
    )


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


def _plain(value: Any, depth: int = 0) -> bool:
    """Made of plain numbers only: exact ``int``/``float``/NumPy numbers, exact ``np.ndarray`` of numbers,
    exact lists and tuples of those (no subclass, nothing with its own ``__eq__`` or ``__array__``)."""
    if depth > 8:
        return False
    if type(value) in (int, float) or (isinstance(value, np.generic) and type(value).__module__ == "numpy"):
        return np.asarray(value).dtype.kind in "iuf"
    if type(value) is np.ndarray:
        return value.dtype.kind in "iuf"
    if type(value) in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    return False


def _numbers(value: Any) -> np.ndarray | None:
    """``value`` as a float array, or None when it is not made of plain numbers (see :func:`_plain`)."""
    if not _plain(value):
        return None
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        return None
    if arr.dtype.kind not in "iuf":
        return None
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
        return CheckFailed(message, input=inputs or "", expected=brief(expected), obtained=brief(actual))

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
            f"Nilai {what} salah{where}: diharapkan {_number(float(expected_arr))}, "
            f"didapat {_number(float(actual_arr))}."
        )
    diff = np.where(close, 0.0, np.abs(actual_arr - expected_arr))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    at = tuple(int(i) for i in worst)
    message = (
        f"Nilai {what} salah{where}: {int((~close).sum())} dari {close.size} elemen berbeda; "
        f"selisih terbesar pada indeks {at}: diharapkan {_number(float(expected_arr[worst]))}, "
        f"didapat {_number(float(actual_arr[worst]))}."
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
    """``value`` as a float array of exactly ``shape`` (for properties that compute with it)."""
    arr = _numbers(value)
    if arr is None:
        raise CheckFailed(
            f"{what} harus berisi bilangan, tetapi didapat {_kind(value)}.", obtained=_kind(value)
        )
    if arr.shape != tuple(shape):
        raise CheckFailed(
            f"Bentuk {what} salah: diharapkan {tuple(shape)}, didapat {arr.shape}.",
            obtained=str(arr.shape),
            expected=str(tuple(shape)),
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


def _judge(fn, args, kwargs, outcome, expected, rtol, atol, what, form_shape) -> list[CheckFailed]:
    shown = show_call(fn, args, kwargs)
    if expected.kind == "raised":
        if outcome.kind == "raised" and outcome.error == expected.error:
            return []
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
                return failures  # the shape is the form clause's promise: values of another shape are not compared
    value = outcome.value
    if (
        form_shape is not None
        and _is_real_scalar(expected.value)
        and isinstance(value, np.ndarray)
        and value.size == 1
    ):
        value = value.reshape(
            ()
        )  # one number in an array: the form clause's concern, its value compared here
    try:
        assert_close(value, expected.value, what or f"keluaran `{fn}`", rtol, atol, shown)
    except CheckFailed as exc:
        failures.append(exc)
    return failures


# --------------------------------------------------------------------------------------------
# Clauses, and charging a failure to one of them
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Clause:
    id: str  # "K1"
    text: str  # as the notebook states it
    points: float


@dataclass
class Failure:
    """A failure charged to one clause (the record keeps the smallest per clause)."""

    clause: str
    message: str
    check: str = ""
    input: str = ""
    expected: str = ""
    obtained: str = ""
    size: int = 0
    own: bool = True  # the input belongs to the clause's own class (K1: an ordinary input)
    origin: str = ""  # the clause of the input's class, when the failure was charged elsewhere
    must_raise: bool = False  # on an input the reference raises for (shown last for other clauses)


@dataclass
class ClauseVerdict:
    clause: Clause
    failure: Failure | None = None
    checks: list[str] = field(default_factory=list)  # the checks whose failures were charged here
    # a failure on an input of this clause's class charged to another clause as the same mistake:
    # the clause keeps its points, and the student is told to look again once that one is fixed
    deferred: Failure | None = None

    @property
    def note(self) -> str:
        if self.failure is not None or self.deferred is None:
            return ""
        return (
            f"Input khusus ketentuan ini juga gagal ({self.deferred.input}), tetapi sebagai kesalahan yang "
            f"sama dengan yang dibebankan ke {self.deferred.clause}; periksa lagi setelah "
            f"{self.deferred.clause} diperbaiki."
        )

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def points(self) -> float:
        return self.clause.points if self.passed else 0.0


# How the twin of a failing input went (see the module docstring).
TWIN_PASSED = "twin-passed"  # the mistake is the narrower clause's own
SAME_VALUES = "same-values"  # wrong on both, related as the reference's results are: the twin's mistake
UNCLEAR = "unclear"  # an error on one or both: the twin's mistake if the clause has evidence
DIFFERENT = "different"  # another mistake than on the twin (inconsistent, or ignoring the feature)
MAX_TWIN_DEPTH = 6  # twin steps followed at most


@dataclass(frozen=True)
class Step:
    clause: str  # the clause of the input's class
    relation: str | None  # how its twin went (None: the class has no twin)
    name: str = ""  # the class's name, e.g. "ids berupa list Python"


@dataclass(frozen=True)
class Membership:
    """A class of input a call belongs to: its clause, its twin (a call, or None), and whether the
    reference gives the twin the same result."""

    clause: str
    twin: Any = None
    same_expected: bool = False
    name: str = ""


def evidence_for(found: list[Membership], must_raise: bool, base: str = BASE_CLAUSE) -> set[str]:
    """The clauses a right answer is evidence for: every class the input belongs to, or K1 for an
    ordinary input; for an input that must raise, only the class that makes it raise (an error raised
    there says nothing about lists, ``base`` or empty ids)."""
    if not found:
        return {base}
    return {found[0].clause} if must_raise else {m.clause for m in found}


def _gist(message: str) -> str:
    """An error message without its numbers: "didapat 7" and "didapat 2" come from the same check."""
    return re.sub(r"\d+(?:\.\d+)?", "#", message)


@dataclass
class RaiseWatch:
    """The clause that says "raise ``ValueError`` exactly when …" (``raises = (clause, error)``).

    A function that raises its own such error — with the message it gives where the clause asks for
    the error — on a valid input whose failure would go to K1 has a wrong check, not a wrong formula:
    that failure is charged to the raise clause instead (and code that raises everywhere earns
    neither: K1 then has no ordinary input answered right). A crash that happens to be a ``ValueError``
    (NumPy's broadcasting, say) gives another message and stays K1's."""

    raises: tuple[str, str] | None = None
    messages: set[str] = field(default_factory=set)  # the function's messages where the error is due

    def saw(self, outcome: Outcome, expected: Outcome) -> None:
        """One compared call: the reference's ``expected`` and the student's ``outcome``."""
        if (
            self.raises
            and expected.kind == outcome.kind == "raised"
            and expected.error == outcome.error == self.raises[1]
        ):
            self.messages.add(_gist(outcome.message))

    def own_check(self, exc: CheckFailed) -> bool:
        """Whether a failure on a valid input is the function raising its own check's error."""
        o = exc.outcome
        return bool(
            self.raises
            and not exc.must_raise
            and o is not None
            and o.kind == "raised"
            and o.error == self.raises[1]
            and _gist(o.message) in self.messages
        )


def relation(
    outcome: Outcome, twin_outcome: Outcome, same_expected: bool, rtol: float = 1e-6, atol: float = 1e-8
) -> str:
    """How a failing call relates to its failing twin, from the student's outcomes on both."""
    if outcome.ok and twin_outcome.ok:
        same = close_enough(outcome.value, twin_outcome.value, rtol, atol)
        return SAME_VALUES if same == same_expected else DIFFERENT
    return UNCLEAR


def trace(
    call: Any,
    outcome: Outcome,
    memberships_of: Callable[[Any], list[Membership]],
    evaluate: Callable[[Any], tuple[Outcome, bool]],
    rtol: float = 1e-6,
    atol: float = 1e-8,
) -> list[Step]:
    """The steps that decide where a failure on ``call`` is charged (see :func:`resolve`).

    An input that must raise (its first class has no twin) and got a value back is that class's.
    Otherwise a class whose twin the function gets right is the one at fault (a list that raised
    where its array twin raises the right error). Otherwise the failure is followed to the twin of
    the first class, unless the first class has no twin (its clause is charged) or the two results
    show another mistake.
    """
    steps: list[Step] = []
    for _ in range(MAX_TWIN_DEPTH):
        found = memberships_of(call)
        if not found:
            break
        if found[0].twin is None and outcome.ok:  # it had to raise and returned: the raising clause's
            return [*steps, Step(found[0].clause, None, found[0].name)]
        head = None
        for m in found:
            if m.twin is None:
                continue
            twin_outcome, passed = evaluate(m.twin)
            if passed:
                return [*steps, Step(m.clause, TWIN_PASSED, m.name)]
            if head is None and m is found[0]:
                head = twin_outcome
        if head is None:
            steps.append(Step(found[0].clause, None, found[0].name))
            break
        rel = relation(outcome, head, found[0].same_expected, rtol, atol)
        steps.append(Step(found[0].clause, rel, found[0].name))
        if rel == DIFFERENT:
            break
        call, outcome = found[0].twin, head
    return steps


def resolve(steps: Iterable[Step], evidence: set[str] | None, base: str = BASE_CLAUSE) -> str:
    """The clause a failure is charged to, from its steps and the clauses with evidence (at least one
    of their inputs answered right; None: take every clause as having some, for a first guess)."""
    return _deciding(steps, evidence, base)[0]


def why(steps: Iterable[Step], evidence: set[str] | None, base: str = BASE_CLAUSE) -> str:
    """Why a failure went to its clause, in a sentence for the student (empty for an ordinary input)."""
    clause, step = _deciding(steps, evidence, base)
    if step is None:
        return ""
    if step.relation == TWIN_PASSED:
        return (
            f"Kegagalan ini khusus untuk input dengan ciri \u201c{step.name}\u201d: tanpa ciri itu (input biasa "
            f"yang paling dekat dengannya) hasil Anda benar, jadi dibebankan ke {clause}."
        )
    if step.relation is None:
        return f"Input ini termasuk \u201c{step.name}\u201d, yang dinilai oleh {clause}."
    if step.relation == UNCLEAR:
        return (
            f"Input ini termasuk \u201c{step.name}\u201d; input biasa yang paling dekat dengannya juga gagal, "
            f"dan belum ada input {clause} lain yang lolos, jadi kegagalan ini dibebankan ke {clause}."
        )
    return (
        f"Input ini termasuk \u201c{step.name}\u201d; input biasa yang paling dekat dengannya juga gagal, "
        f"tetapi dengan cara lain, jadi kegagalan ini dibebankan juga ke {clause}."
    )


def settle(
    pending: Iterable[tuple[list[Step], CheckFailed, str, int]],
    evidence: set[str],
    base: str = BASE_CLAUSE,
    watch: RaiseWatch | None = None,
) -> list[Failure]:
    """The failures whose clause waited for the evidence, charged now (the graders and the public
    check alike), each message ending with why it went there. With ``watch``, a failure that would go
    to K1 but is the function raising its own check's error on a valid input goes to the raise clause
    (see :class:`RaiseWatch`), and then K1 needs an ordinary input answered right."""
    out: list[Failure] = []
    moved: list[Failure] = []
    for steps, exc, check, size in pending:
        clause = resolve(steps, evidence, base)
        if clause == base and watch is not None and watch.raises and watch.own_check(exc):
            raise_clause, error = watch.raises[0], untrusted(watch.raises[1])
            moved.append(
                Failure(
                    raise_clause,
                    f"{str(exc).rstrip('.')}. Input ini sah: {error} hanya boleh dilempar untuk input yang "
                    f"disebut {raise_clause}.",
                    check,
                    exc.input,
                    "tanpa " + error,
                    error,
                    size,
                    own=False,
                )
            )
            continue
        reason = why(steps, evidence, base)
        message = f"{str(exc).rstrip('.')}. {reason}" if reason else str(exc)
        origin = steps[0].clause if steps else base
        out.append(
            Failure(
                clause,
                message,
                check,
                exc.input,
                exc.expected,
                exc.obtained,
                size,
                own=clause == origin,
                origin=origin if origin != clause else "",
                must_raise=exc.must_raise,
            )
        )
    if moved and base not in evidence:
        first = moved[0]
        out.append(
            Failure(
                base,
                f"Tidak ada input biasa yang dijawab benar. {first.message}",
                first.check,
                first.input,
                first.expected,
                first.obtained,
                first.size,
            )
        )
    return out + moved


def _deciding(steps: Iterable[Step], evidence: set[str] | None, base: str) -> tuple[str, Step | None]:
    for step in steps:
        if step.relation in (None, TWIN_PASSED, DIFFERENT):
            return step.clause, step
        if step.relation == UNCLEAR and evidence is not None and step.clause not in evidence:
            return step.clause, step
    return base, None


def _shown_first(f: Failure) -> tuple:
    """Which failure a clause shows: one on an input of its own class, then one where a value was
    expected (an error case says little about a list or a base), then the smallest."""
    return (not f.own, f.must_raise, f.size)


def verdicts(
    clauses: Iterable[Clause], failures: Iterable[Failure], unproven: Mapping[str, Failure] | None = None
) -> list[ClauseVerdict]:
    """One verdict per clause: the smallest failure charged to it (if any) and the checks that found it.
    ``unproven``: clauses that still fail without a failure of their own (a form clause when no result
    came back at all), with the failure to show."""
    out = {c.id: ClauseVerdict(c) for c in clauses}
    for f in failures:
        v = out.get(f.clause)
        if v is None:
            continue
        if f.check and f.check not in v.checks:
            v.checks.append(f.check)
        if v.failure is None or _shown_first(f) < _shown_first(v.failure):
            v.failure = f
    for clause, f in (unproven or {}).items():
        if clause in out and out[clause].failure is None:
            out[clause].failure = f
    for f in failures:
        v = out.get(f.origin) if f.origin else None
        if v is not None and v.failure is None and (v.deferred is None or f.size < v.deferred.size):
            v.deferred = f
    return list(out.values())


def clause_lines(
    clause: str,
    text: str,
    points: float,
    max_points: float,
    message: str = "",
    note: str = "",
    short: bool = False,
) -> list[str]:
    """One clause's result as markdown lines: what the feedback after grading and the public check
    before it both show (``message``: the failure charged to it, empty when it passed; ``note``: a
    passed clause whose own inputs failed as another clause's mistake; ``short``: a passed clause
    without its text, as the public check prints it)."""
    mark = "❌" if message else "✅"
    head = f"- {mark} **{clause}** ({points:g}/{max_points:g} poin)"
    lines = [head if short and not message else f"{head}: {text}"]
    if message:
        lines.append(f"  - {message}")
    elif note:
        lines.append(f"  - Catatan: {note}")
    return lines


def verdict_lines(v: ClauseVerdict, short: bool = False) -> list[str]:
    return clause_lines(
        v.clause.id,
        v.clause.text,
        v.points,
        v.clause.points,
        v.failure.message if v.failure else "",
        v.note,
        short,
    )


# --------------------------------------------------------------------------------------------
# Data files: arguments and results written as JSON
# --------------------------------------------------------------------------------------------
def to_data(value: Any) -> Any:
    """A plain value as JSON data (arrays as ``{"array": ..., "dtype": ...}``, tuples as ``{"tuple": ...}``)."""
    if isinstance(value, np.ndarray):
        data = {"array": value.tolist(), "dtype": value.dtype.name}
        if value.size == 0:
            data["shape"] = list(value.shape)
        return data
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [to_data(v) for v in value]}
    if isinstance(value, list):
        return [to_data(v) for v in value]
    return value


def from_data(data: Any) -> Any:
    if isinstance(data, dict) and "array" in data:
        return np.asarray(data["array"], dtype=data.get("dtype", "float64")).reshape(
            data.get("shape", np.shape(data["array"]))
        )
    if isinstance(data, dict) and "tuple" in data:
        return tuple(from_data(v) for v in data["tuple"])
    if isinstance(data, list):
        return [from_data(v) for v in data]
    return data


def outcome_to_data(outcome: Outcome) -> dict:
    if outcome.kind == "raised":
        return {"raises": outcome.error}
    return {"value": to_data(outcome.value)}


def outcome_from_data(data: Mapping[str, Any]) -> Outcome:
    if "raises" in data:
        return Outcome("raised", error=str(data["raises"]))
    return Outcome("value", value=from_data(data["value"]))


# --------------------------------------------------------------------------------------------
# The public check, in the student's kernel
# --------------------------------------------------------------------------------------------
HERE = Path(__file__).resolve().parent


class PublicChecker:
    """Runs a function's public cases and properties (``<notebook>.json`` beside this file) on the
    student's function, charging each failure as the graders do."""

    def __init__(
        self, name: str, func: Callable[..., Any], spec: Mapping[str, Any], properties: Any = None
    ) -> None:
        self.name, self.func, self.spec, self.properties = name, func, spec, properties
        self.clauses = [Clause(k, c["text"], float(c["points"])) for k, c in spec["clauses"].items()]
        self.form_shape = spec.get("form_shape")
        self.form = spec.get("form")
        self.base = spec.get("base", BASE_CLAUSE)
        self.form_seen = False
        self.first_no_value: CheckFailed | None = None
        raises = spec.get("raises")
        self.watch = RaiseWatch(tuple(raises) if raises else None)
        self.failures: list[Failure] = []
        self.evidence: set[str] = set()
        self.pending: list[tuple[list[Step], CheckFailed, str, int]] = []
        self.check = ""

    # -- what a property receives (the graders' Grader offers the same) --------------------------
    def call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        if fn != self.name:
            raise KeyError(fn)
        outcome = call_outcome(self.func, args, kwargs)
        if not outcome.ok:
            raise no_value(fn, outcome, args, kwargs)
        return outcome.value

    array = staticmethod(as_array)
    close = staticmethod(assert_close)

    @staticmethod
    def fail(message: str, input: str = "") -> None:
        raise CheckFailed(message, input=input)

    # -- running ---------------------------------------------------------------------------------
    def _evaluate(self, case: Mapping[str, Any]) -> tuple[Outcome, list[CheckFailed]]:
        args = tuple(from_data(a) for a in case["args"])
        kwargs = {k: from_data(v) for k, v in case.get("kwargs", {}).items()}
        outcome = call_outcome(self.func, args, kwargs)
        expected = outcome_from_data(case["expected"])
        failures = judge(
            self.name,
            args,
            kwargs,
            outcome,
            expected,
            rtol=case.get("rtol", 1e-6),
            atol=case.get("atol", 1e-8),
            form_shape=self.form_shape,
        )
        if outcome.ok and not any(f.kind == "form" for f in failures) and expected.ok:
            self.form_seen = True
        return outcome, failures

    def _memberships(self, case: Mapping[str, Any]) -> list[Membership]:
        return [
            Membership(m["clause"], m.get("twin"), bool(m.get("same_expected")), m.get("class", ""))
            for m in case.get("classes", [])
        ]

    def _twin(self, case: Mapping[str, Any]) -> tuple[Outcome, bool]:
        outcome, failures = self._evaluate(case)
        if not any(f.kind != "form" for f in failures):
            self.evidence.update(
                evidence_for(self._memberships(case), "raises" in case["expected"], self.base)
            )
            return outcome, True
        return outcome, False

    def run_case(self, case: Mapping[str, Any]) -> None:
        self.check = case.get("check", "")
        outcome, failures = self._evaluate(case)
        self.watch.saw(outcome, outcome_from_data(case["expected"]))
        if not failures:
            self.evidence.update(
                evidence_for(self._memberships(case), "raises" in case["expected"], self.base)
            )
            return
        size = len(json.dumps(case["args"]))
        for exc in failures:
            if exc.kind == "form":
                self._charge(self.form or self.base, exc, size)
            else:
                if self.first_no_value is None and exc.kind == "no-value":
                    self.first_no_value = CheckFailed(str(exc), input=exc.input, obtained=exc.obtained)
                steps = trace(
                    case,
                    outcome,
                    self._memberships,
                    self._twin,
                    case.get("rtol", 1e-6),
                    case.get("atol", 1e-8),
                )
                self.pending.append((steps, exc, self.check, size))

    def run_property(self, entry: Mapping[str, Any]) -> None:
        self.check = entry["check"]
        prop = getattr(self.properties, entry["property"])
        try:
            prop(self, *(from_data(a) for a in entry["args"]))
        except CheckFailed as exc:  # its inputs are ordinary or of its own clause (tests/test_contracts.py)
            self._charge(entry["clause"], exc, len(json.dumps(entry["args"])))

    def _charge(
        self, clause: str, exc: CheckFailed, size: int, check: str | None = None, own: bool = True
    ) -> None:
        self.failures.append(
            Failure(clause, str(exc), check or self.check, exc.input, exc.expected, exc.obtained, size, own)
        )

    def verdicts(self) -> list[ClauseVerdict]:
        self.failures += settle(self.pending, self.evidence, self.base, self.watch)
        self.pending = []
        return verdicts(
            self.clauses, self.failures, unproven_form(self.form, self.form_seen, self.first_no_value)
        )


def unproven_form(form: str | None, seen: bool, first: CheckFailed | None) -> dict[str, Failure]:
    """A form clause with no result of the right form at all (every call raised, ...) is not met."""
    if not form or seen:
        return {}
    message = "Tidak ada keluaran yang dapat diperiksa bentuknya" + (f": {first}" if first else ".")
    return {
        form: Failure(form, message, "", first.input if first else "", "", first.obtained if first else "")
    }


def _load(name: str, folder: Path) -> tuple[Mapping[str, Any], Any]:
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if name in data.get("functions", {}):
            properties = None
            if (folder / "properties.py").is_file():
                import importlib.util

                spec = importlib.util.spec_from_file_location("public_properties", folder / "properties.py")
                if spec is not None and spec.loader is not None:
                    properties = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(properties)
            return data["functions"][name], properties
    raise FileNotFoundError(
        f"Kasus publik untuk `{name}` tidak ditemukan di {folder}. Unduh ulang seluruh folder tugas "
        "(notebook beserta folder public_checks/ di sampingnya)."
    )


def run_public(
    name: str, func: Callable[..., Any], folder: Path | None = None
) -> tuple[list[ClauseVerdict], int, int]:
    """The clause verdicts of the public check of ``name``, with the numbers of cases and properties
    (read from ``folder``, by default the folder of this file)."""
    spec, properties = _load(name, folder or HERE)
    checker = PublicChecker(name, func, spec, properties)
    for case in spec.get("cases", []):
        checker.run_case(case)
    for entry in spec.get("properties", []):
        checker.run_property(entry)
    return checker.verdicts(), len(spec.get("cases", [])), len(spec.get("properties", []))


def _upstream_note(name: str, func: Callable[..., Any], folder: Path | None) -> str:
    """A note when ``name`` builds on another graded function whose own public check fails: its
    failures show here too, while the graders give ``name`` a correct one."""
    spec, _ = _load(name, folder or HERE)
    upstream = spec.get("builds_on")
    calls = getattr(getattr(func, "__code__", None), "co_names", ())
    other = getattr(func, "__globals__", {}).get(upstream) if upstream in calls else None
    if not upstream or not callable(other):
        return ""  # it does not call the upstream function by name
    verdicts_up, _, _ = run_public(upstream, other, folder)
    lost = [v.clause.id for v in verdicts_up if not v.passed]
    if not lost:
        return ""
    return (
        f"Catatan: `{name}` memakai `{upstream}` Anda, yang belum lolos pemeriksaan publiknya (ketentuan "
        f"{', '.join(lost)}); kegagalan di atas bisa berasal dari sana. Saat dinilai, `{name}` diberi "
        f"`{upstream}` yang benar, jadi perbaiki `{upstream}` lebih dulu."
    )


def check_function(name: str, func: Callable[..., Any], folder: Path | None = None) -> None:
    """Run the public check of graded function ``name`` on ``func``; print every clause's result and
    raise ``AssertionError`` when a clause fails (so that nbgrader's Validate reports it, with the
    failed clauses' messages and without a traceback into this file)."""
    if not callable(func):
        raise PublicCheckFailed(f"`{name}` bukan fungsi.")
    results, n_cases, n_props = run_public(name, func, folder)
    failed = [v for v in results if not v.passed]
    unwritten = len(failed) == len(results) and all(
        f"`{name}` belum ditulis" in (v.failure.message if v.failure else "") for v in failed
    )
    print(
        plain(
            f"Pemeriksaan publik `{name}`: {n_cases} kasus (keluaran yang diharapkan dihitung dari solusi "
            f"referensi) dan {n_props} sifat."
        )
    )
    if unwritten:
        print(plain(f"`{name}` belum ditulis: ganti `raise NotImplementedError(...)` dengan kode Anda."))
    for v in results:
        lines = verdict_lines(v, short=True)
        for line in lines[:1] if unwritten else lines:
            print(plain(line.replace("- ✅", "[lolos]").replace("- ❌", "[gagal]")))
    total = sum(v.clause.points for v in results)
    if not failed:
        print(
            f"\nSemua ketentuan lolos pada kasus publik ({total:g} poin). Penilai tersembunyi memakai lebih "
            "banyak input untuk ketentuan yang sama, jadi poin penuh belum dijamin."
        )
        return
    note = _upstream_note(name, func, folder)
    if note:
        print(f"\n{plain(note)}")
    earned = sum(v.points for v in results)
    print(f"\nPoin pada kasus publik: {earned:g} dari {total:g}.")
    summary = [
        f"`{name}`: ketentuan {', '.join(v.clause.id for v in failed)} belum terpenuhi pada kasus publik."
    ]
    if not unwritten:
        summary += [f"{v.clause.id}: {v.failure.message}" for v in failed if v.failure]
    raise PublicCheckFailed("\n".join(plain(line) for line in summary))


class PublicCheckFailed(AssertionError):
    """A clause failed on the public cases: shown (in the notebook and by Validate) as its message
    only, not as a traceback into this file."""

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines instead of the traceback
        return [f"{type(self).__name__}: {self}"]

"""The vocabulary the hidden graders in ``graders/`` are written in.

A grader module declares checks and misconceptions with decorators::

    @check("embed", "contoh-bab", points=1, clause="K1", title="Contoh dari bab")
    def chapter_examples(g: Grader) -> None:
        for case in cases("embed"):
            g.expect("embed", *case.args)

    @misconception("embed", "missing-position", hint="Jangan lupa menambahkan pos_table[t].")
    def embed_without_position(ids, tok_table, pos_table):
        '''Only the token lookup; the position row is never added.'''
        return tok_table[np.asarray(ids, dtype=int)]

Each check belongs to one graded function and so to its test cell ``test_<function>``, and names
the clause of that function's contract (the "Ketentuan yang dinilai" list in the notebook) that it
enforces; the cell's score is the sum of the points of its passed checks. ``Grader`` calls the
student's function (in the sandbox), the reference (in this process) and compares them; every
comparison goes through :func:`assert_close`, whose messages say in Bahasa Indonesia what is wrong,
on which input, what was expected and what was obtained.

A function that builds on another graded function (``rope_scores`` on ``apply_rope``) declares how
with :func:`builds_on`. While it is graded, the upstream name in the student's code answers with
correct values (``StudentProcess.upstream``), so a wrong ``apply_rope`` costs points in its own cell
only; the declaration also carries the upstream's misconceptions over to the function built on it.
"""

from __future__ import annotations

import copy
import functools
import html
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .sandbox.client import Outcome

# A failing generated check looks for a smaller failing input with at most this many distinct
# evaluations (a count, not a time: a re-grade must find the same input).
SHRINK_EVALUATIONS = 60


# --------------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    function: str
    name: str
    points: float
    title: str
    clause: str  # the contract clause (e.g. "K2") of ``function`` that this check enforces
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
    carried_from: str | None = None  # upstream function whose misconception this one carries over

    @property
    def description(self) -> str:
        return (self.implementation.__doc__ or "").strip()


@dataclass(frozen=True)
class Composition:
    """How ``function`` is built on ``upstream`` (another graded function, graded before it).

    ``build(upstream_fn, *args, **kwargs)`` computes ``function(*args, **kwargs)`` the way the
    notebook suggests, calling ``upstream_fn`` wherever the student's code would call ``upstream``;
    with a catalogued wrong ``upstream_fn`` it is that misconception carried into ``function``.
    """

    function: str
    upstream: str
    build: Callable[..., Any]

    def carry(self, m: Misconception) -> Misconception:
        """``m`` (a misconception of the upstream function) as it shows up in ``function``."""

        def implementation(*args: Any, **kwargs: Any) -> Any:
            return self.build(m.implementation, *args, **kwargs)

        implementation.__doc__ = f"{self.function} built on {self.upstream} with: {m.description}"
        hint = (
            f"{m.hint} (Kesalahan ini ada di kode `{self.function}` sendiri: saat `{self.function}` dinilai, "
            f"pemanggilan `{self.upstream}` di dalamnya selalu memberi hasil yang benar.)"
        )
        return Misconception(self.function, m.id, hint, implementation, carried_from=self.upstream)


def check(function: str, name: str, points: float, title: str, clause: str):
    """Declare a check of ``function`` worth ``points`` (stable ``name``, Indonesian ``title``)
    that enforces contract clause ``clause`` of that function."""

    def wrap(fn: Callable[[Grader], None]):
        fn.__pe_check__ = Check(function, name, float(points), title, clause, fn)  # type: ignore[attr-defined]
        return fn

    return wrap


def misconception(function: str, id: str, hint: str):
    """Declare a documented wrong implementation of ``function`` with a hint for students."""

    def wrap(fn: Callable[..., Any]):
        fn.__pe_misconception__ = Misconception(function, id, hint, fn)  # type: ignore[attr-defined]
        return fn

    return wrap


def builds_on(function: str, upstream: str):
    """Declare that ``function`` is built on the graded function ``upstream`` (see :class:`Composition`)."""

    def wrap(fn: Callable[..., Any]):
        fn.__pe_composition__ = Composition(function, upstream, fn)  # type: ignore[attr-defined]
        return fn

    return wrap


def _hypothesis_settings(n: int, phases: tuple[str, ...]):
    from hypothesis import HealthCheck, Phase, settings

    return settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[getattr(Phase, p) for p in phases],
        suppress_health_check=list(HealthCheck),
    )


@functools.cache
def draw(strategy_factory: Callable[[], Any], n: int) -> tuple:
    """``n`` deterministic examples of a hypothesis strategy (cached per process).

    Derandomized and database-free, so a re-grade sees exactly the same inputs.
    """
    from hypothesis import given

    out: list = []

    @_hypothesis_settings(n, ("explicit", "generate"))
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
    """A check did not pass; the message is shown to the student.

    ``input``, ``expected`` and ``obtained`` (short texts) are kept apart for the record.
    """

    def __init__(self, message: str, *, input: str = "", expected: str = "", obtained: str = "") -> None:
        super().__init__(message)
        self.input, self.expected, self.obtained = input, expected, obtained


class Caller(Protocol):
    upstream: dict[
        str, tuple[str, Callable[..., Any]]
    ]  # dependent -> (upstream name, trusted implementation)

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Outcome: ...

    def status(self, fn: str) -> str: ...


@dataclass
class CallRecord:
    fn: str
    args: tuple
    kwargs: dict
    outcome: Outcome


def reference_outcome(func: Callable[..., Any], args: tuple, kwargs: dict) -> Outcome:
    """Call trusted code on private copies of the arguments and wrap the result as an Outcome."""
    try:
        with np.errstate(all="ignore"):
            value = func(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    except Exception as exc:  # noqa: BLE001 (reference or catalogued variant raising is an outcome)
        return Outcome("raised", error=type(exc).__name__, message=str(exc))
    return Outcome("value", value=value)


@dataclass
class Grader:
    """What a check function receives: the student's functions, the reference, and helpers."""

    student: Caller
    reference: Mapping[str, Callable[..., Any]]
    log: list[CallRecord] = field(default_factory=list)

    # -- calling -----------------------------------------------------------------------------
    def ref(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """The reference solution's result (trusted; arguments are copied first)."""
        return self.reference[fn](*copy.deepcopy(args), **copy.deepcopy(kwargs))

    def outcome(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        outcome = self.student.call(fn, *args, **kwargs)
        self.log.append(CallRecord(fn, args, kwargs, outcome))
        return outcome

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """The student's result, or CheckFailed saying what went wrong and on which input."""
        outcome = self.outcome(fn, *args, **kwargs)
        if not outcome.ok:
            raise _no_value(fn, outcome, args, kwargs)
        return outcome.value

    # -- comparing ---------------------------------------------------------------------------
    def expect(
        self,
        fn: str,
        *args: Any,
        rtol: float = 1e-6,
        atol: float = 1e-8,
        what: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """The student's ``fn(*args)`` must behave like the reference: same value or same exception."""
        expected = reference_outcome(self.reference[fn], args, kwargs)
        if expected.kind == "raised":
            self.expect_raises(fn, expected.error, *args, **kwargs)
            return None
        outcome = self.outcome(fn, *args, **kwargs)
        if not outcome.ok:
            raise _no_value(fn, outcome, args, kwargs, expected=brief(expected.value))
        assert_close(
            outcome.value,
            expected.value,
            what=what or f"keluaran `{fn}`",
            rtol=rtol,
            atol=atol,
            inputs=show_call(fn, args, kwargs),
        )
        return outcome.value

    def expect_raises(self, fn: str, error: str, *args: Any, **kwargs: Any) -> None:
        outcome = self.outcome(fn, *args, **kwargs)
        shown = show_call(fn, args, kwargs)
        if outcome.kind == "raised" and outcome.error == error:
            return
        if outcome.kind == "raised" and outcome.error != "NotImplementedError":
            raise CheckFailed(
                f"`{fn}` seharusnya melempar {error} untuk input {shown}, tetapi melempar "
                f"{untrusted(outcome.error)}.",
                input=shown,
                expected=error,
                obtained=untrusted(outcome.error),
            )
        if outcome.kind == "value":
            raise CheckFailed(
                f"`{fn}` seharusnya melempar {error} untuk input {shown}, tetapi mengembalikan "
                f"{brief(outcome.value)}.",
                input=shown,
                expected=error,
                obtained=brief(outcome.value),
            )
        raise _no_value(fn, outcome, args, kwargs, expected=error)

    # -- generated inputs ----------------------------------------------------------------------
    def for_all(self, strategy_factory: Callable[[], Any], n: int, body: Callable[[Any], None]) -> None:
        """Run ``body`` on ``n`` generated examples; on failure report the smallest failing input.

        The smallest failing example among those drawn is shrunk further with hypothesis (bounded
        in time and examples, deterministic), and the failure on it is what the student sees.
        """
        failing = []
        for example in draw(strategy_factory, n):
            try:
                body(example)
            except CheckFailed:
                failing.append(example)
        if not failing:
            return
        smallest = min(failing, key=_size)
        shrunk = _shrink(strategy_factory, body, budget=SHRINK_EVALUATIONS)
        if shrunk is not None and _size(shrunk) < _size(smallest):
            smallest = shrunk
        body(smallest)  # raises CheckFailed with the message for that input
        raise CheckFailed("Hasil tidak konsisten: pemanggilan yang sama memberi hasil berbeda.")


def _no_value(fn: str, outcome: Outcome, args: tuple, kwargs: dict, expected: str = "") -> CheckFailed:
    """The failure of a call that gave no usable value (raised, timed out, crashed, ...)."""
    return CheckFailed(
        describe_failure(fn, outcome, args, kwargs),
        input=show_call(fn, args, kwargs),
        expected=expected,
        obtained=_obtained(outcome),
    )


def _size(example: Any) -> int:
    try:
        return len(json.dumps(example, default=lambda v: np.asarray(v).tolist()))
    except (TypeError, ValueError):
        return len(repr(example))


def _shrink(strategy_factory: Callable[[], Any], body: Callable[[Any], None], budget: int) -> Any | None:
    """A small failing example found by hypothesis (``None`` when none is found in the budget)."""
    from hypothesis import find
    from hypothesis.errors import HypothesisException, NoSuchExample

    seen: dict[str, bool] = {}

    def fails(example: Any) -> bool:
        key = repr(example)
        if key not in seen:
            if len(seen) >= budget:
                return False
            try:
                body(example)
                seen[key] = False
            except CheckFailed:
                seen[key] = True
        return seen[key]

    try:
        return find(strategy_factory(), fails, settings=_hypothesis_settings(budget, ("generate", "shrink")))
    except (NoSuchExample, HypothesisException):
        return None


def show_call(fn: str, args: tuple, kwargs: dict) -> str:
    """``fn(arg, ..., key=value)`` with arrays shown compactly (bounded length)."""
    parts = [brief(a) for a in args] + [f"{k}={brief(v)}" for k, v in kwargs.items()]
    return f"{fn}(" + ", ".join(parts) + ")"


def brief(value: Any) -> str:
    """A value as one short line (arrays rounded and elided), for feedback messages.

    Only plain values are formatted; anything else is named by its type (never its own ``repr``).
    """
    if type(value) is np.ndarray and value.dtype.kind in "biuf":
        text = np.array2string(value, precision=4, suppress_small=True, separator=", ", threshold=40)
        if value.size == 0:
            text = f"array berbentuk {value.shape}"
    elif type(value) in (tuple, list) and len(value) <= 20:
        inner = ", ".join(brief(v) for v in value)
        text = f"({inner}{',' if len(value) == 1 else ''})" if type(value) is tuple else f"[{inner}]"
    elif type(value) is float or isinstance(value, np.floating):
        text = f"{float(value):.6g}"
    elif type(value) in (int, bool) or value is None or isinstance(value, np.integer):
        text = repr(value.item() if isinstance(value, np.generic) else value)
    else:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _obtained(outcome: Outcome) -> str:
    if outcome.kind == "raised":
        return untrusted(outcome.error)
    return {
        "timeout": "batas waktu terlampaui",
        "crashed": "proses berhenti",
        "limit": outcome.message,
        "missing": "fungsi tidak ada",
        "invalid": "bukan nilai numerik",
    }.get(outcome.kind, outcome.kind)


def untrusted(text: str) -> str:
    """Text that came from student code, made inert for the Markdown/HTML feedback (no tags, no links)."""
    text = html.escape(str(text), quote=True)
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)


def describe_failure(fn: str, outcome: Outcome, args: tuple | None = None, kwargs: dict | None = None) -> str:
    """Indonesian sentence for a call that did not return a usable value."""
    where = f" untuk input {show_call(fn, args, kwargs or {})}" if args is not None else ""
    if outcome.kind == "raised":
        if outcome.error == "NotImplementedError":
            return f"`{fn}` belum diimplementasikan (masih `raise NotImplementedError(...)`)."
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


def assert_close(
    actual: Any, expected: Any, what: str, rtol: float = 1e-6, atol: float = 1e-8, inputs: str | None = None
) -> None:
    """Compare a student's value with the expected one: type, shape, finiteness, then values.

    ``inputs`` (the call, as :func:`show_call` writes it) is named in every message.
    """
    where = f" untuk input {inputs}" if inputs else ""

    def fail(message: str) -> CheckFailed:
        return CheckFailed(message, input=inputs or "", expected=brief(expected), obtained=brief(actual))

    if isinstance(expected, tuple):
        if not isinstance(actual, tuple) or len(actual) != len(expected):
            raise fail(
                f"{what} harus berupa tuple berisi {len(expected)} nilai{where}, "
                f"tetapi didapat {_kind(actual)}."
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_close(a, e, f"{what} (elemen ke-{i})", rtol, atol, inputs)
        return
    expected_arr = np.asarray(expected, dtype=np.float64)
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            raise fail(f"{what} harus berupa np.ndarray{where}, tetapi didapat {_kind(actual)}.")
    elif not _is_real_scalar(actual):
        raise fail(f"{what} harus berupa satu bilangan{where}, tetapi didapat {_kind(actual)}.")
    actual_arr = np.asarray(actual)
    if actual_arr.shape != expected_arr.shape:
        raise fail(
            f"Bentuk {what} salah{where}: diharapkan {expected_arr.shape}, didapat {actual_arr.shape}."
        )
    if actual_arr.dtype.kind not in "biuf":
        raise fail(f"{what} harus berisi bilangan{where}, bukan dtype {actual_arr.dtype}.")
    actual_arr = actual_arr.astype(np.float64)
    if not np.all(np.isfinite(actual_arr)) and np.all(np.isfinite(expected_arr)):
        raise fail(
            f"{what} mengandung NaN atau tak hingga{where}"
            " — periksa pembagian dengan nol atau overflow (misalnya exp dari bilangan besar)."
        )
    close = np.isclose(actual_arr, expected_arr, rtol=rtol, atol=atol)
    if close.all():
        return
    diff = np.where(close, 0.0, np.abs(actual_arr - expected_arr))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    message = (
        f"Nilai {what} salah{where}: {int((~close).sum())} dari {close.size} elemen berbeda "
        f"(selisih terbesar {float(diff.max()):.4g}"
    )
    message += f" pada indeks {tuple(int(i) for i in worst)})." if worst else ")."
    message += f" Diharapkan {brief(expected_arr)}, didapat {brief(actual_arr)}."
    raise fail(message)


def require_shape(value: Any, shape: tuple, what: str) -> np.ndarray:
    """``value`` as a float array of exactly ``shape`` (for property checks that compute with it)."""
    if not isinstance(value, np.ndarray):
        raise CheckFailed(
            f"{what} harus berupa np.ndarray, tetapi didapat {_kind(value)}.",
            obtained=_kind(value),
            expected=f"np.ndarray berbentuk {tuple(shape)}",
        )
    if value.shape != tuple(shape):
        raise CheckFailed(
            f"Bentuk {what} salah: diharapkan {tuple(shape)}, didapat {value.shape}.",
            obtained=str(value.shape),
            expected=str(tuple(shape)),
        )
    if value.dtype.kind not in "biuf":
        raise CheckFailed(
            f"{what} harus berisi bilangan, bukan dtype {value.dtype}.", obtained=str(value.dtype)
        )
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


def _close(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    try:
        assert_close(a, b, "nilai", rtol=rtol, atol=atol)
    except CheckFailed:
        return False
    return True

"""What a student reads about a call: values shown briefly, a call's outcome, and the Indonesian
sentence for a call that gave no value."""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


# --------------------------------------------------------------------------------------------
# Showing values
# --------------------------------------------------------------------------------------------
def number_text(x: float) -> str:
    """A float as people write it: 6 significant digits, a whole number keeps its ".0" (so ``base=10.0``
    reads as a float, not an int)."""
    text = f"{x:.6g}"
    return text + ".0" if text.lstrip("-").isdigit() else text


def brief(value: Any) -> str:
    """A value as one short line (arrays rounded and elided, marked ``np.array(...)`` so they read apart
    from Python lists), for messages.

    Only plain values are formatted; anything else is named by its type (never its own ``repr``).
    """
    if type(value) is np.ndarray and value.dtype.kind in "biufc":
        if value.size == 0:
            text = f"array berbentuk {value.shape}"
        elif value.ndim == 0:
            text = f"np.array({brief(value.item())})"
        else:
            text = f"np.array({_array_text(value)})"
    elif type(value) in (tuple, list) and len(value) <= 20:
        inner = ", ".join(brief(v) for v in value)
        text = f"({inner}{',' if len(value) == 1 else ''})" if type(value) is tuple else f"[{inner}]"
    elif type(value) is float or isinstance(value, np.floating):
        text = number_text(float(value))
    elif type(value) is complex or isinstance(value, np.complexfloating):
        text = f"({number_text(complex(value).real)}{complex(value).imag:+.6g}j)"
    elif type(value) in (int, bool) or value is None or isinstance(value, np.integer):
        text = repr(value.item() if isinstance(value, np.generic) else value)
    else:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


_ARRAY_TEXTS: dict[tuple[str, tuple[int, ...], bytes], str] = {}  # the same arrays are shown again and again
_ARRAY_TEXTS_BYTES = 16 << 20  # what the remembered arrays may hold in all; emptied when it is reached
_array_texts_held = [0]


def _array_text(value: np.ndarray) -> str:
    """``np.array2string`` of ``value`` as messages write it, remembered by content (it costs a quarter
    of a millisecond, and checks show the same inputs in many messages: 105 s -> 67 s for the build's
    self-validation)."""
    if value.nbytes > 1 << 16:
        return _array_string(value)
    key = (value.dtype.str, value.shape, value.tobytes())
    text = _ARRAY_TEXTS.get(key)
    if text is None:
        if _array_texts_held[0] + len(key[2]) > _ARRAY_TEXTS_BYTES:
            _ARRAY_TEXTS.clear()
            _array_texts_held[0] = 0
        text = _ARRAY_TEXTS[key] = _array_string(value)
        _array_texts_held[0] += len(key[2])
    return text


def _array_string(value: np.ndarray) -> str:
    return np.array2string(value, precision=4, suppress_small=True, separator=", ", threshold=40)


def show_call(fn: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """``fn(arg, ..., key=value)`` with arrays shown compactly (bounded length)."""
    parts = [brief(a) for a in args] + [f"{k}={brief(v)}" for k, v in kwargs.items()]
    return f"{fn}(" + ", ".join(parts) + ")"


def untrusted(text: str) -> str:
    """Text that came from student code, made inert for Markdown/HTML (no tags, no links)."""
    # Markdown first: the entities html.escape writes (``&#x27;``) must not get a backslash in them.
    text = re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", str(text))
    return html.escape(text, quote=True)


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
    promises), "shape" (a property found a result of another shape) or "no-value" (the call raised,
    timed out, crashed, ...; ``call`` and ``outcome`` say which). ``input``, ``expected`` and
    ``obtained`` are short texts kept apart for the record; ``expected`` and ``obtained`` may be given
    as a function that writes the text, called once when the text is read (most failures are only
    counted, e.g. while a failing input is shrunk, and writing out arrays is what costs).
    """

    def __init__(
        self,
        message: str,
        *,
        input: str = "",
        expected: str | Callable[[], str] = "",
        obtained: str | Callable[[], str] = "",
        kind: str = "value",
        call: tuple[str, tuple, dict] | None = None,
        outcome: Outcome | None = None,
    ) -> None:
        super().__init__(message)
        self.input, self._expected, self._obtained = input, expected, obtained
        self.kind, self.call, self.outcome = kind, call, outcome
        self.must_raise = False  # the reference raises on this input (set by judge)

    @property
    def expected(self) -> str:
        if callable(self._expected):
            self._expected = self._expected()
        return self._expected

    @property
    def obtained(self) -> str:
        if callable(self._obtained):
            self._obtained = self._obtained()
        return self._obtained

    def __reduce__(self):  # the texts written out: a function does not cross processes
        return (
            type(self),
            self.args,
            {**self.__dict__, "_expected": self.expected, "_obtained": self.obtained},
        )


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

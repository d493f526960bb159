"""Whether an answer is a real one: what a clause's points are earned by.

A clause earns its points by evidence, never by default (see the package docstring). A right answer
is evidence when the expected result could not be had without computing it: an array with at least
two different numbers that is none of the arguments. Anything else — a wrong answer, or a right one
where the expected result is empty, constant, a single number or one of the arguments — is a *real
answer* only when it is made of numbers, is not constant or an argument where the expected result is
not, changes when the input's values change (the *probe*: the same input with other values, where
the reference's result changes too), and is the same when the same input is given again.

So a function that returns ``None``, a constant, zeros of the right shape, its own argument or noise
gives no real answer anywhere, and earns nothing, while a function with one honest mistake gives real
(wrong) answers and keeps the points of the clauses its mistake is not about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .compare import NUMERIC_KINDS, plain_numbers
from .messages import Outcome, brief

MAX_TRIES = 12  # answers looked at before a function is said to give no real answer


# --------------------------------------------------------------------------------------------
# A result's numbers, and comparing two results of the student's with each other
# --------------------------------------------------------------------------------------------
def numeric_parts(value: Any) -> list[np.ndarray] | None:
    """A result's numbers as arrays, one per part (each element of a tuple or list of arrays; else the
    whole value), of any numeric kind; None when it holds anything but plain numbers."""
    if not plain_numbers(value):
        return None
    parts = (
        list(value)
        if type(value) in (tuple, list) and value and all(type(v) in (np.ndarray, tuple, list) for v in value)
        else [value]
    )
    out = []
    for part in parts:
        try:
            arr = np.asarray(part)
        except (ValueError, TypeError):  # a ragged list
            return None
        if arr.dtype.kind not in NUMERIC_KINDS:
            return None
        out.append(arr)
    return out


def same_result(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool | None:
    """Whether two of the student's results hold the same numbers (any numeric kind, NaN equal to
    NaN); None when either is not made of numbers, so the two cannot be compared."""
    x, y = numeric_parts(a), numeric_parts(b)
    if x is None or y is None:
        return None
    if len(x) != len(y) or any(p.shape != q.shape for p, q in zip(x, y, strict=True)):
        return False
    with np.errstate(all="ignore"):
        return all(
            bool(np.allclose(p.astype(complex), q.astype(complex), rtol=rtol, atol=atol, equal_nan=True))
            for p, q in zip(x, y, strict=True)
        )


def _constant(parts: list[np.ndarray]) -> bool:
    """At least two numbers, all the same (or all NaN)."""
    flat = np.concatenate([p.astype(complex).ravel() for p in parts]) if parts else np.zeros(0)
    if flat.size < 2:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all((flat == flat[0]) | (np.isnan(flat) & np.isnan(flat[0]))))


def _informative(parts: list[np.ndarray]) -> bool:
    """At least two different numbers: a result a constant could not give."""
    return sum(p.size for p in parts) >= 2 and not _constant(parts)


def _arguments(args: tuple, kwargs: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    for i, a in enumerate(args):
        yield f"ke-{i + 1}", a
    for k, a in kwargs.items():
        yield f"`{k}`", a


def repeated_argument(value: Any, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """Which argument (an array, a list or a number) ``value`` holds the same numbers as ("" for none)."""
    for name, arg in _arguments(args, kwargs):
        if type(arg) is not bool and numeric_parts(arg) is not None and same_result(value, arg):
            return name
    return ""


def echoed(value: Any, expected: Any, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """Which argument ``value`` merely repeats where the expected result does not ("" for none)."""
    name = repeated_argument(value, args, kwargs)
    return "" if not name or repeated_argument(expected, args, kwargs) == name else name


# --------------------------------------------------------------------------------------------
# Real answers
# --------------------------------------------------------------------------------------------
REAL = "real"
UNREAL = "unreal"
UNDECIDED = "undecided"  # a real answer as far as can be told, but nothing shows the input is used


@dataclass
class Answer:
    """One of the student's answers, with what is needed to look at it again.

    ``probe()``: the student's outcome on the same input with other values (where the reference's
    result differs), and that input shown; None when there is no such input. ``again()``: the
    student's outcome on the same input once more.
    """

    shown: str  # the call, as show_call writes it
    outcome: Outcome
    expected: Any  # the reference's value
    right: bool
    args: tuple = ()
    kwargs: Mapping[str, Any] | None = None
    probe: Callable[[], tuple[Outcome, str] | None] | None = None
    again: Callable[[], Outcome] | None = None


def look_at(answer: Answer, strict: bool = True) -> tuple[str, str]:
    """``(REAL | UNREAL | UNDECIDED, why)``: whether ``answer`` is a real one, and why not.

    ``strict`` (where the function must show it gives a real answer at all): a result that is
    constant or one of the arguments where the expected result is not is no real answer either.
    Without it (a failure charged elsewhere as the same mistake, by a function that gives real
    answers elsewhere) a small input may well give such a result by chance: there the answer must be
    numbers that change with the input's values and stay the same when it is given again."""
    value = answer.outcome.value
    parts, expected = numeric_parts(value), numeric_parts(answer.expected)
    if not answer.outcome.ok:
        return UNREAL, f"`{answer.shown}` tidak mengembalikan nilai"
    if parts is None:
        return UNREAL, f"keluaran `{answer.shown}` bukan bilangan (didapat {brief(value)})"
    kwargs = answer.kwargs or {}
    informative = expected is not None and _informative(expected)
    if answer.right and informative and not repeated_argument(answer.expected, answer.args, kwargs):
        return REAL, ""
    trivial = False  # strict: a result a constant or an echo could give tells nothing either way
    if strict and _constant(parts):
        if informative:
            return UNREAL, (
                f"keluaran `{answer.shown}` berisi satu nilai yang sama di semua elemen ({brief(value)}), "
                "padahal hasil yang benar tidak"
            )
        trivial = True
    arg = repeated_argument(value, answer.args, kwargs) if strict else ""
    if arg and not echoed(value, answer.expected, answer.args, kwargs):
        trivial = True  # the right result is that argument too
    elif arg:
        return UNREAL, f"keluaran `{answer.shown}` sama dengan argumen {arg}-nya sendiri"
    verdict = UNDECIDED
    looked = answer.probe() if answer.probe is not None else None
    if looked is not None:
        probed, shown = looked
        if probed.ok and same_result(probed.value, value):
            return UNREAL, (
                f"keluarannya tidak berubah ketika nilai input berubah: `{answer.shown}` dan `{shown}` "
                "memberi hasil yang sama, padahal hasil yang benar berbeda"
            )
        if probed.ok and not trivial:
            verdict = REAL
    if answer.again is not None:
        repeated = answer.again()
        if not (repeated.ok and same_result(repeated.value, value)):
            return UNREAL, f"keluaran `{answer.shown}` berubah ketika input yang sama diberikan lagi"
    return verdict, ""


def _telling_first(answer: Answer) -> bool:
    """Answers whose expected result has several different numbers first (else in their order)."""
    expected = numeric_parts(answer.expected)
    return not (expected is not None and _informative(expected))


def first_real(answers: Iterable[Answer], no_value: str = "") -> tuple[bool, str, str]:
    """``(found, why not, on which input)``: whether any of ``answers`` (at most :data:`MAX_TRIES`,
    those a constant could not answer right first) is a real answer, decided as such; otherwise the
    first reason one was not (``no_value``: what to say when no call gave a value at all, e.g. the
    first call's error)."""
    why, where, tried = "", "", 0
    for answer in sorted(answers, key=_telling_first):
        verdict, reason = look_at(answer)
        if verdict == REAL:
            return True, "", ""
        if reason and not why:
            why, where = reason, answer.shown
        tried += 1
        if tried >= MAX_TRIES:
            break
    if not why:
        why = (
            (no_value.rstrip(".") or "tidak ada pemanggilan yang mengembalikan nilai")
            if not tried
            else "tidak ada keluaran yang berubah ketika nilai inputnya berubah"
        )
    return False, why, where

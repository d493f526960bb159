"""Misconception diagnosis, and calling trusted functions the way the sandbox calls student code.

:func:`diagnose` names the catalogued misconceptions (``misconceptions.py`` of each notebook in ``graders/<assignment>/``) whose wrong
implementation explains how a student's function differs from the reference, from the calls the
checks made. :class:`InProcessCaller` runs trusted implementations (reference, misconceptions,
alternative correct solutions) through the same JSON round trip as the sandbox, for the graders'
self-validation and the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..public_checks import same_values
from ..sandbox.client import Outcome
from .declarations import Misconception
from .grader import CallRecord, reference_outcome


def same_outcome(a: Outcome, b: Outcome, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind == "raised":
        return a.error == b.error
    if a.kind != "value":
        return False
    return same_values(a.value, b.value, rtol=rtol, atol=atol)


def diagnose(
    log: Iterable[CallRecord],
    candidates: Iterable[Misconception],
    reference: Mapping[str, Callable[..., Any]],
) -> list[Misconception]:
    """Misconceptions whose wrong implementation explains how the student's function differs.

    A call *tells* a misconception apart when its wrong implementation and the reference behave
    differently on it. A misconception is diagnosed when on every telling call the student's
    function behaved like the wrong implementation — or like the reference where the reference
    raised an error, because the student kept a check (a ``ValueError``, a block-size test) that
    the bare wrong implementation lacks — and did so like the wrong implementation at least once.
    Calls that do not tell it apart are not held against it (another, unrelated slip elsewhere).
    So a misconception inside otherwise careful code is recognised, code that is right where the
    misconception would give other values is not blamed for it, and correct code is never diagnosed.
    """
    records = [rec for rec in log if rec.outcome.kind in ("value", "raised")]
    expected = [reference_outcome(reference[rec.fn], rec.args, rec.kwargs) for rec in records]
    found: list[Misconception] = []
    for m in candidates:
        explained = 0
        for rec, ref in zip(records, expected, strict=True):
            if rec.fn != m.function:
                continue
            variant = reference_outcome(m.implementation, rec.args, rec.kwargs)
            if same_outcome(variant, ref):
                continue  # this call does not tell the misconception apart
            if same_outcome(rec.outcome, variant):
                explained += 1
            elif not (ref.kind == "raised" and same_outcome(rec.outcome, ref)):
                break  # right (or otherwise wrong) where the misconception gives another value
        else:
            if explained and m.id not in {f.id for f in found}:
                found.append(m)
    return found


class InProcessCaller:
    """Calls trusted functions directly, with the same encode/decode round trip as the sandbox.

    For the graders' own self-validation (reference, catalogued misconceptions, alternative
    correct implementations); student code always goes through ``pe_course.sandbox.client.StudentProcess``. Like
    the sandboxed worker, it answers a dependent function's calls to its upstream name with the
    trusted upstream while the dependent runs (``upstream``).
    """

    def __init__(self, functions: Mapping[str, Callable[..., Any]]) -> None:
        self.functions = functions
        self.upstream: dict[str, tuple[str, Callable[..., Any]]] = {}

    def status(self, fn: str) -> str:
        return "ok" if callable(self.functions.get(fn)) else "missing"

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        from ..sandbox.inside import codec

        if self.status(fn) != "ok":
            return Outcome("missing", message="missing")
        args = codec.decode_untrusted(codec.encode(list(args)))
        kwargs = {k: codec.decode_untrusted(codec.encode(v)) for k, v in kwargs.items()}
        func = self.functions[fn]
        names = getattr(func, "__globals__", {})
        upstream = self.upstream.get(fn)
        saved = names.get(upstream[0], _ABSENT) if upstream else _ABSENT
        if upstream:
            names[upstream[0]] = upstream[1]
        try:
            outcome = reference_outcome(func, tuple(args), kwargs)
        finally:
            if upstream:
                if saved is _ABSENT:
                    names.pop(upstream[0], None)
                else:
                    names[upstream[0]] = saved
        if outcome.kind != "value":
            return outcome
        try:
            return Outcome("value", value=codec.decode_untrusted(codec.encode(outcome.value)))
        except (TypeError, codec.DecodeError) as exc:
            return Outcome("invalid", message=str(exc))


_ABSENT = object()

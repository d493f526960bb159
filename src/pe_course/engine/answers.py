"""The answers the graders look at again: the student's answer on an input, with its probe and the
same call once more, for the rule that points are earned by real answers
(:mod:`pe_course.public_checks.evidence`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from ..public_checks import Answer, Outcome, call_outcome, judge, same_result, show_call
from .declarations import Graded
from .inputs import call_key, probe_call


class Grader(Protocol):
    """What of :class:`pe_course.engine.grader.Grader` the answers need."""

    graded: Graded | None
    reference: Mapping[str, Callable[..., Any]]
    log: list
    public_calls: frozenset[str]

    def outcome(self, fn: str, *args: Any, **kwargs: Any) -> Outcome: ...


def student_answer(
    grader: Grader,
    fn: str,
    args: tuple,
    kwargs: Mapping[str, Any],
    outcome: Outcome,
    expected: Any,
    right: bool,
) -> Answer:
    """The student's answer to ``fn(*args, **kwargs)``, to look at again: the probe (the input with
    other values, where the reference's result differs, as the graders declare it) and the same call
    once more, both made only when looked at."""
    args, kwargs = tuple(args), dict(kwargs)

    def probe() -> tuple[Outcome, str] | None:
        call = probe_call(grader.graded, grader.reference[fn], args, kwargs)
        if call is None:
            return None
        p_args, p_kwargs = call
        p_expected = call_outcome(grader.reference[fn], p_args, p_kwargs)
        if not p_expected.ok or same_result(p_expected.value, expected) is not False:
            return None  # the reference gives the same result there: the probe tells nothing
        return grader.outcome(fn, *p_args, **p_kwargs), show_call(fn, p_args, p_kwargs)

    return Answer(
        show_call(fn, args, kwargs),
        outcome,
        expected,
        right,
        args,
        kwargs,
        probe,
        lambda: grader.outcome(fn, *args, **kwargs),
    )


def graders_answers(grader: Grader) -> Iterator[Answer]:
    """The answers the graded function gave on the graders' own inputs (not the public cases, which a
    student could copy, nor the tiny ones shrinking chose to fail), once each, in the order the
    checks made them (the cases first): where the gate looks for a real one."""
    if grader.graded is None:
        return
    fn = grader.graded.function
    func = grader.reference[fn]
    seen: set[str] = set()
    records = [r for r in grader.log if r.fn == fn and r.outcome.ok and not r.shrinking]
    for rec in records:
        key = call_key(fn, rec.args, rec.kwargs)
        if key in seen or key in grader.public_calls:
            continue
        seen.add(key)
        expected = call_outcome(func, rec.args, rec.kwargs)
        if not expected.ok:
            continue
        right = not any(f.kind != "form" for f in judge(fn, rec.args, rec.kwargs, rec.outcome, expected))
        yield student_answer(grader, fn, rec.args, rec.kwargs, rec.outcome, expected.value, right)

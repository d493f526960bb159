"""The Grader: what a check function of ``graders/<assignment>/<notebook>/`` receives.

It calls the student's function (in the sandbox, through ``student``), the reference (in this
process), and compares them with the same code and messages as the public check; every failure goes
into its :class:`~pe_course.engine.ledger.Ledger`, with what is needed to charge it to one clause.
The graders' whole vocabulary (``check``, ``graded``, ``InputClass``, ``Grader``, ...) is imported
from :mod:`pe_course.engine`.

The unit of credit is the clause (the "Ketentuan yang dinilai" of the notebook, with its points):
each check names the clause it enforces, every failure is charged to exactly one clause by the rule
of :mod:`pe_course.public_checks`, and a cell's score is the sum of the points of the clauses
nothing was charged to (:func:`pe_course.engine.grade.award`).

A function that builds on another graded function (``rope_scores`` on ``apply_rope``) declares how
with :func:`~pe_course.engine.declarations.builds_on`. While it is graded, the upstream name in the
student's code answers with correct values (``StudentProcess.upstream``), so a wrong ``apply_rope``
costs points in its own cell only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..public_checks import (
    BASE_CLAUSE,
    Answer,
    CheckFailed,
    Clause,
    ClauseVerdict,
    Membership,
    Outcome,
    RaiseWatch,
    Step,
    as_array,
    assert_close,
    call_outcome,
    evidence_for,
    judge,
    no_value,
    show_call,
    trace,
)
from .answers import graders_answers, student_answer
from .declarations import Check, Graded
from .drawing import SMALL_ENOUGH, draw, shrink
from .inputs import call_key, memberships, size_of, twin_call
from .ledger import Attempt, Ledger


# --------------------------------------------------------------------------------------------
# Running checks
# --------------------------------------------------------------------------------------------
class Caller(Protocol):
    """The student's functions: the sandboxed worker (``StudentProcess``), or trusted code called in
    this process (:class:`~pe_course.engine.diagnosis.InProcessCaller`)."""

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
    shrinking: bool = False  # made while looking for a smaller failing input (tiny, and chosen to fail)


def reference_outcome(func: Callable[..., Any], args: tuple, kwargs: dict) -> Outcome:
    """Call trusted code on private copies of the arguments and wrap the result as an Outcome."""
    return call_outcome(func, args, kwargs)


@dataclass
class Grader:
    """What a check function receives: the student's functions, the reference, and helpers.

    It offers properties the same ``call`` / ``array`` / ``close`` / ``fail`` as the public check's
    checker, and writes every failure into ``ledger`` with what is needed to charge it to one clause.
    """

    student: Caller
    reference: Mapping[str, Callable[..., Any]]
    graded: Graded | None = None  # the function being graded
    public_calls: frozenset[str] = frozenset()  # call_key() of the public cases (and their twins)
    log: list[CallRecord] = field(default_factory=list)
    check: Check | None = None  # the check running now
    ledger: Ledger = field(init=False)
    _outcomes: dict[str, Outcome] = field(default_factory=dict)

    def __post_init__(self) -> None:
        graded = self.graded
        self.ledger = Ledger(
            graded.base if graded else BASE_CLAUSE, RaiseWatch(graded.raises if graded else None)
        )

    # -- calling -----------------------------------------------------------------------------
    def ref(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """The reference solution's result (trusted; arguments are copied first)."""
        outcome = reference_outcome(self.reference[fn], args, kwargs)
        if not outcome.ok:
            raise RuntimeError(f"reference {fn} raised {outcome.error}: {outcome.message}")
        return outcome.value

    def outcome(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        outcome = self.student.call(fn, *args, **kwargs)
        self.log.append(CallRecord(fn, args, kwargs, outcome, self.ledger.shrinking))
        return outcome

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """The student's result, or CheckFailed saying what went wrong and on which input."""
        outcome = self.outcome(fn, *args, **kwargs)
        if not outcome.ok:
            raise no_value(fn, outcome, args, kwargs)
        return outcome.value

    array = staticmethod(as_array)
    close = staticmethod(assert_close)

    @staticmethod
    def fail(message: str, input: str = "") -> None:
        raise CheckFailed(message, input=input)

    # -- comparing with the reference --------------------------------------------------------
    def expect(
        self,
        fn: str,
        *args: Any,
        rtol: float = 1e-6,
        atol: float = 1e-8,
        what: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """The student's ``fn(*args)`` must behave like the reference: same value or same exception.

        A failure is recorded (and charged later), not raised: the check goes on with its next input.
        Returns the student's value when it matched, else None.
        """
        expected = reference_outcome(self.reference[fn], args, kwargs)
        outcome = self.outcome(fn, *args, **kwargs)
        failures = self._judge(fn, args, kwargs, outcome, expected, rtol, atol, what)
        ledger = self.ledger
        if self.graded is not None and fn == self.graded.function and not ledger.shrinking:
            ledger.watch.saw(outcome, expected)
        if outcome.ok and expected.ok and not any(f.kind == "form" for f in failures):
            ledger.form_seen = ledger.form_seen or call_key(fn, args, kwargs) not in self.public_calls
        if not any(f.kind != "form" for f in failures):  # right values (a wrong form is the form clause's)
            self._evidence(fn, args, kwargs)
        if not failures:
            return outcome.value if outcome.ok else None
        size = size_of((args, kwargs))
        for exc in failures:
            if exc.kind == "form":
                self._charge(self.graded.form if self.graded and self.graded.form else ledger.base, exc, size)
            else:
                if exc.kind == "no-value" and ledger.first_no_value is None:
                    ledger.first_no_value = CheckFailed(str(exc), input=exc.input, obtained=exc.obtained)
                answer = None
                if outcome.ok and expected.ok:
                    answer = student_answer(self, fn, args, kwargs, outcome, expected.value, right=False)
                self._defer(self._steps(fn, args, kwargs, outcome, rtol, atol), exc, size, answer)
        return None

    def expect_raises(self, fn: str, error: str, *args: Any, **kwargs: Any) -> None:
        """The student's ``fn`` must raise ``error`` here (the reference does too)."""
        expected = reference_outcome(self.reference[fn], args, kwargs)
        if expected.kind != "raised" or expected.error != error:
            raise RuntimeError(f"the reference does not raise {error} for {show_call(fn, args, kwargs)}")
        self.expect(fn, *args, **kwargs)

    def expect_no_error(self, fn: str, error: str, *args: Any, **kwargs: Any) -> None:
        """``fn`` must not raise ``error`` on this valid input: charged to the running check's clause
        (a clause that says "raise ``error`` when ..." is met only by code that raises exactly then)."""
        outcome = self.outcome(fn, *args, **kwargs)
        if outcome.kind == "raised" and outcome.error == error:
            shown = show_call(fn, args, kwargs)
            self._charge(
                self._clause,
                CheckFailed(
                    f"`{fn}` melempar {error} untuk input yang sah {shown}; {error} hanya untuk input "
                    "yang disebut ketentuan ini.",
                    input=shown,
                    expected="tanpa " + error,
                    obtained=error,
                ),
                size_of((args, kwargs)),
            )

    def _judge(self, fn, args, kwargs, outcome, expected, rtol, atol, what) -> list[CheckFailed]:
        form_shape = None
        if self.graded is not None and fn == self.graded.function and self.graded.form:
            form_shape = self.graded.form_shape
        return judge(
            fn, args, kwargs, outcome, expected, rtol=rtol, atol=atol, what=what, form_shape=form_shape
        )

    # -- generated inputs ----------------------------------------------------------------------
    def for_all(self, strategy_factory: Callable[[], Any], n: int, body: Callable[[Any], None]) -> None:
        """Run ``body`` on ``n`` generated examples; every failure is recorded and charged.

        For each clause charged here whose smallest failing input drawn is not small already, a
        smaller one is looked for with hypothesis (bounded and deterministic), and the failure on it is
        what the student sees for that clause.
        """
        smallest: dict[str, int] = {}  # clause -> size of the smallest drawn input charged to it
        for example in draw(strategy_factory, n):
            size = size_of(example)
            for clause in self._trying(body, example):
                smallest[clause] = min(size, smallest.get(clause, size))
        for clause in sorted(c for c, size in smallest.items() if size > SMALL_ENOUGH):

            def charged_here(example: Any, clause: str = clause) -> bool:
                return clause in self._trying(body, example, Attempt.looking())

            shrunk = shrink(strategy_factory, charged_here)
            if shrunk is not None:
                self._trying(body, shrunk, Attempt.for_message(clause))

    def _trying(self, body: Callable[[Any], None], example: Any, attempt: Attempt | None = None) -> set[str]:
        """Run ``body`` on one example through ``attempt`` (every failure kept, unless told otherwise);
        the clauses its failures are (provisionally) charged to."""
        with self.ledger.trying(attempt or Attempt()) as tried:
            try:
                body(example)
            except CheckFailed as exc:
                self.record(exc, size_of(example))
        return tried.clauses

    # -- charging ------------------------------------------------------------------------------
    @property
    def _clause(self) -> str:
        """The running check's clause: where a stated property that does not hold is charged."""
        return self.check.clause if self.check else self.ledger.base

    def record(self, exc: CheckFailed, size: int) -> None:
        """A failure raised inside a check: a call that gave no value is charged by its input's class,
        a stated property that does not hold to the check's clause."""
        if not exc.input and self.log:  # a property: the call it made last is the input it failed on
            last = self.log[-1]
            exc.input = show_call(last.fn, last.args, last.kwargs)
        if exc.kind == "no-value" and exc.call is not None and exc.outcome is not None:
            fn, args, kwargs = exc.call
            self._defer(self._steps(fn, args, kwargs, exc.outcome, 1e-6, 1e-8), exc, size)
        elif exc.kind == "shape" and self.graded is not None and self.graded.form and self.graded.form_shape:
            self._charge(
                self.graded.form, exc, size
            )  # the form clause promises the shape: charged there once
        else:
            self._charge(self._clause, exc, size)

    def _charge(self, clause: str, exc: CheckFailed, size: int) -> None:
        self.ledger.charge(clause, exc, size, self.check.name if self.check else "")

    def _defer(self, steps: list[Step], exc: CheckFailed, size: int, answer: Answer | None = None) -> None:
        self.ledger.defer(steps, exc, size, self.check.name if self.check else "", answer)

    def _evidence(self, fn: str, args: tuple, kwargs: Mapping[str, Any]) -> None:
        """A right answer is evidence for the classes the input belongs to, unless the student could
        have copied it from the public cases."""
        if (
            self.graded is None
            or fn != self.graded.function
            or call_key(fn, args, kwargs) in self.public_calls
        ):
            return
        func = self.reference[fn]
        found = [Membership(c.clause) for c in memberships(self.graded, func, args, kwargs)]
        must_raise = reference_outcome(func, args, dict(kwargs)).kind == "raised"
        self.ledger.evidence.update(evidence_for(found, must_raise, self.ledger.base))

    def _steps(self, fn, args, kwargs, outcome: Outcome, rtol: float, atol: float) -> list[Step]:
        """Where a failing call is charged (see :func:`pe_course.public_checks.trace`)."""
        if self.graded is None or fn != self.graded.function:
            return []
        func = self.reference[fn]

        def memberships_of(call) -> list[Membership]:
            a, k = call
            return [
                Membership(c.clause, twin_call(c, func, a, k), c.same_expected, c.name)
                for c in memberships(self.graded, func, a, k)
            ]

        def evaluate(call) -> tuple[Outcome, bool]:
            a, k = call
            t_outcome = self._twin_outcome(fn, a, k)
            expected = reference_outcome(func, a, k)
            passed = not any(
                f.kind != "form" for f in judge(fn, a, k, t_outcome, expected, rtol=rtol, atol=atol)
            )
            if passed:
                self._evidence(fn, a, k)
            return t_outcome, passed

        return trace((tuple(args), dict(kwargs)), outcome, memberships_of, evaluate, rtol, atol)

    def _twin_outcome(self, fn: str, args: tuple, kwargs: Mapping[str, Any]) -> Outcome:
        key = call_key(fn, args, kwargs)
        if key not in self._outcomes:
            self._outcomes[key] = self.outcome(fn, *args, **kwargs)
        return self._outcomes[key]

    def verdicts(self, clauses: Mapping[str, Clause]) -> list[ClauseVerdict]:
        """Every clause's verdict, once all checks have run (see :meth:`Ledger.verdicts`)."""
        graded = self.graded
        return self.ledger.verdicts(
            clauses, graded.form if graded else None, graded.function if graded else "", graders_answers(self)
        )

    @contextlib.contextmanager
    def running(self, chk: Check) -> Iterator[None]:
        outer, self.check = self.check, chk
        try:
            yield
        finally:
            self.check = outer

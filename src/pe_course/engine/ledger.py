"""What one graded function's checks found, kept until every check has run: the ledger a Grader writes.

A failure is charged to its clause at once (a stated property that does not hold: the check's clause;
a result of the wrong form: the form clause), or it waits (a wrong result: whether it is the narrower
clause's own mistake or its twin's depends on which clauses have inputs answered right, known only
when every check has run). :meth:`Ledger.verdicts` then charges the waiting ones by the shipped rule
(:func:`pe_course.public_checks.settle`) and gives every clause its verdict
(:func:`pe_course.public_checks.verdicts`); :func:`pe_course.engine.grade.award` gives it its points.

While ``Grader.for_all`` tries one generated example, an :class:`Attempt` stands between the checks
and the ledger: it notes the clauses the example's failures go to, and says which of them are kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ..public_checks import (
    BASE_CLAUSE,
    Answer,
    CheckFailed,
    Clause,
    ClauseVerdict,
    Failure,
    Gate,
    Pending,
    RaiseWatch,
    Step,
    first_real,
    resolve,
    settle,
    unproven_form,
    verdicts,
)


@dataclass
class Attempt:
    """One example tried by ``Grader.for_all``: the clauses its failures are (provisionally) charged
    to, and which of them the ledger keeps (``keeps``: None for all)."""

    keeps: frozenset[str] | None = None
    clauses: set[str] = field(default_factory=set)

    @classmethod
    def looking(cls) -> Attempt:
        """While shrinking: the failures are only looked at, none is kept."""
        return cls(frozenset())

    @classmethod
    def for_message(cls, clause: str) -> Attempt:
        """A smaller input for the message of ``clause``: only its failures are kept (never a new charge)."""
        return cls(frozenset({clause}))

    @property
    def shrinking(self) -> bool:
        return self.keeps == frozenset()

    def admits(self, clause: str) -> bool:
        """Note that a failure goes to ``clause``; whether the ledger keeps it."""
        self.clauses.add(clause)
        return self.keeps is None or clause in self.keeps


@dataclass
class Ledger:
    """The failures charged, the failures waiting for the evidence, and the evidence: the clauses with
    at least one input answered right (that the student could not have copied from the public cases)."""

    base: str = BASE_CLAUSE  # the clause of ordinary inputs
    watch: RaiseWatch = field(default_factory=RaiseWatch)
    failures: list[Failure] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    evidence: set[str] = field(default_factory=set)
    found: dict[str, list[str]] = field(default_factory=dict)  # check name -> the failures it found
    form_seen: bool = False  # a result of the promised form came back at least once
    first_no_value: CheckFailed | None = None  # the first call that gave no value, for the gate
    attempt: Attempt | None = None  # the example for_all is trying now

    @property
    def shrinking(self) -> bool:
        return self.attempt is not None and self.attempt.shrinking

    def charge(self, clause: str, exc: CheckFailed, size: int, check: str) -> None:
        """``exc``, found by ``check`` on an input of ``size``, charged to ``clause`` now."""
        if self.attempt is not None and not self.attempt.admits(clause):
            return
        self.failures.append(
            Failure(clause, str(exc), self._found(check, exc), exc.input, exc.expected, exc.obtained, size)
        )

    def defer(
        self, steps: list[Step], exc: CheckFailed, size: int, check: str, answer: Answer | None
    ) -> None:
        """``exc`` waits for the evidence; ``steps`` (:func:`pe_course.public_checks.trace`) decide where it goes."""
        guess = resolve(steps, None, self.base)  # provisional: the evidence is not complete yet
        if self.attempt is not None and not self.attempt.admits(guess):
            return
        self.pending.append(Pending(steps, exc, self._found(check, exc), size, answer))

    def _found(self, check: str, exc: CheckFailed) -> str:
        self.found.setdefault(check, []).append(str(exc))
        return check

    @contextlib.contextmanager
    def trying(self, attempt: Attempt) -> Iterator[Attempt]:
        """Failures recorded in this block go through ``attempt``."""
        outer, self.attempt = self.attempt, attempt
        try:
            yield attempt
        finally:
            self.attempt = outer

    def verdicts(
        self, clauses: Mapping[str, Clause], form: str | None, function: str, answers: Iterable[Answer]
    ) -> list[ClauseVerdict]:
        """Every clause's verdict, once all checks have run (the evidence is complete then).
        ``answers``: the function's answers on the graders' inputs, where the gate looks for a real one
        (read after the waiting failures are charged: charging them may look at answers again)."""
        self.failures += settle(self.pending, self.evidence, self.base, self.watch)
        self.pending = []
        found, why, where = first_real(answers, str(self.first_no_value or ""))
        return verdicts(
            clauses.values(),
            self.failures,
            unproven_form(form, self.form_seen, self.first_no_value),
            shown=self.evidence | ({form} if form and self.form_seen else set()),
            gate=Gate(found, why, where),
            function=function,
        )

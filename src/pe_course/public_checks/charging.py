"""The charging rule: which clause a failure is charged to (see the package docstring); the verdicts
that follow are :mod:`.verdicts`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .evidence import UNREAL, Answer, look_at, same_result
from .messages import CheckFailed, Outcome, untrusted

BASE_CLAUSE = "K1"


# --------------------------------------------------------------------------------------------
# Clauses, and charging a failure to one of them
# --------------------------------------------------------------------------------------------
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
    # charged elsewhere as the same mistake, but the answer on the input is not a real one (why):
    # then ``origin`` cannot keep its points by it (see :mod:`.evidence`)
    unreal: str = ""


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
    """How a failing call relates to its failing twin, from the student's outcomes on both (any
    numbers: two bool or complex results are compared as they are; results that are not numbers
    cannot be, which is unclear like an error)."""
    if outcome.ok and twin_outcome.ok:
        same = same_result(outcome.value, twin_outcome.value, rtol, atol)
        if same is None:
            return UNCLEAR
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


@dataclass
class Pending:
    """A failure whose clause waits for the evidence (all checks run), with the student's answer on
    its input, to look at again if the failure goes elsewhere as the same mistake."""

    steps: list[Step]
    exc: CheckFailed
    check: str
    size: int
    answer: Answer | None = None


MAX_LOOKS = 3  # answers looked at again per clause whose failures went elsewhere as the same mistake


def settle(
    pending: Iterable[Pending],
    evidence: set[str],
    base: str = BASE_CLAUSE,
    watch: RaiseWatch | None = None,
) -> list[Failure]:
    """The failures whose clause waited for the evidence, charged now (the graders and the public
    check alike), each message ending with why it went there. With ``watch``, a failure that would go
    to K1 but is the function raising its own check's error on a valid input goes to the raise clause
    (see :class:`RaiseWatch`), and then K1 needs an ordinary input answered right. A failure charged
    elsewhere as the same mistake because the results relate as the reference's do is looked at again
    (the smallest first, :data:`MAX_LOOKS` per clause): when the answer there is not a real one,
    ``Failure.unreal`` says why, and its input's clause cannot keep its points by it."""
    out: list[Failure] = []
    moved: list[Failure] = []
    looked: dict[str, int] = {}
    for p in sorted(pending, key=lambda p: p.size):
        steps, exc, check, size = p.steps, p.exc, p.check, p.size
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
        unreal = ""
        if origin != clause and steps[0].relation == SAME_VALUES and p.answer is not None:
            looked[origin] = looked.get(origin, 0) + 1
            if looked[origin] <= MAX_LOOKS:
                verdict, problem = look_at(p.answer, strict=False)
                unreal = problem if verdict == UNREAL else ""
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
                unreal=unreal,
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

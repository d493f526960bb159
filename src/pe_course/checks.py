"""The vocabulary the hidden graders in ``graders/`` are written in.

A grader module declares, for each graded function, the classes of input its clauses name, its
checks, and its misconceptions::

    EMBED = graded(
        "embed",
        InputClass("K3", "ids kosong", lambda ids, tok_table, pos_table: len(ids) == 0,
                   twin=lambda ids, tok_table, pos_table: {"ids": [0], ...}),
    )

    @check("embed", "acak", clause="K2", title="ids (list atau array) dan tabel acak")
    def embed_random(g: Grader) -> None:
        g.for_all(s.embed_inputs, 25, lambda ex: g.expect("embed", *ex))

    @misconception("embed", "missing-position", hint="Jangan lupa menambahkan pos_table[t].")
    def embed_without_position(ids, tok_table, pos_table):
        '''Only the token lookup; the position row is never added.'''
        ...

The unit of credit is the clause (the "Ketentuan yang dinilai" of the notebook, with its points):
each check names the clause it enforces, every failure is charged to exactly one clause by the
rule of :mod:`pe_course.public_checks`, and a cell's score is the sum of the points of the clauses
nothing was charged to. ``Grader`` calls the student's function (in the sandbox), the reference
(in this process) and compares them with the same code and messages as the public check.

A function that builds on another graded function (``rope_scores`` on ``apply_rope``) declares how
with :func:`builds_on`. While it is graded, the upstream name in the student's code answers with
correct values (``StudentProcess.upstream``), so a wrong ``apply_rope`` costs points in its own cell
only; the declaration also carries the upstream's misconceptions over to the function built on it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .public_checks import (
    BASE_CLAUSE,
    CheckFailed,
    Clause,
    ClauseVerdict,
    Failure,
    Membership,
    Outcome,
    RaiseWatch,
    Step,
    as_array,
    assert_close,
    brief,
    call_outcome,
    evidence_for,
    judge,
    no_value,
    resolve,
    settle,
    show_call,
    to_data,
    trace,
    unproven_form,
    verdicts,
)

__all__ = [
    "CheckFailed",
    "Grader",
    "InputClass",
    "as_array",
    "assert_close",
    "brief",
    "builds_on",
    "check",
    "graded",
    "misconception",
]

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
    title: str
    clause: str  # the contract clause (e.g. "K2") of ``function`` that this check enforces
    run: Callable[[Grader], None]
    # what the public check runs of it: a property of graders/properties.py and its public inputs
    public: tuple[Callable[..., None], tuple[tuple, ...]] | None = None

    @property
    def cell(self) -> str:
        return f"test_{self.function}"


@dataclass(frozen=True)
class InputClass:
    """A narrower class of input one clause names (a Python list, ``T = 0``, ``base`` given, ...).

    ``member`` and ``twin`` receive the call's arguments by name, defaults filled in. ``twin`` gives
    the arguments of the nearest input without this feature (the same ids as an array, a table one
    row longer, the default ``base``); ``same_expected`` says that the reference gives the twin the
    same result. A class without a twin (an input that must raise) is always its clause's.
    """

    clause: str
    name: str
    member: Callable[..., bool]
    twin: Callable[..., dict] | None = None
    same_expected: bool = False


@dataclass(frozen=True)
class Graded:
    """A graded function's classes of input (most specific first) and its form clause."""

    function: str
    classes: tuple[InputClass, ...] = ()
    form: str | None = None  # the clause that promises the result's form (container, and shape if form_shape)
    form_shape: bool = False
    base: str = BASE_CLAUSE
    # inputs the graders must draw besides every class (combinations a clause names), by Indonesian name:
    # each predicate receives the call's arguments by name (tests/test_contracts.py checks they are drawn)
    must_draw: tuple[tuple[str, Callable[..., bool]], ...] = ()
    # the clause that says "raise <error> exactly when ...": an ordinary valid input on which the
    # function raises that error is charged to it too (code raising everywhere does not earn it)
    raises: tuple[str, str] | None = None


def graded(
    function: str,
    *classes: InputClass,
    form: str | None = None,
    form_shape: bool = False,
    must_draw: dict[str, Callable[..., bool]] | None = None,
    raises: tuple[str, str] | None = None,
) -> Graded:
    """Declare (at module level) the classes of input and the form clause of graded ``function``;
    ``must_draw``: combinations of classes (or other inputs) the graders' own inputs must include;
    ``raises=("K4", "ValueError")``: the clause that says when that error is raised."""
    return Graded(
        function, tuple(classes), form, form_shape, must_draw=tuple((must_draw or {}).items()), raises=raises
    )


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


def check(
    function: str,
    name: str,
    clause: str,
    title: str,
    public: tuple[Callable[..., None], list[tuple]] | None = None,
):
    """Declare a check of ``function`` (stable ``name``, Indonesian ``title``) that enforces clause
    ``clause``. ``public=(prop, inputs)``: the public check runs ``prop(checker, *args)`` (a function of
    ``graders/properties.py``, which ships with the release) on each of ``inputs``."""

    def wrap(fn: Callable[[Grader], None]):
        shown = (public[0], tuple(tuple(args) for args in public[1])) if public else None
        fn.__pe_check__ = Check(function, name, title, clause, fn, shown)  # type: ignore[attr-defined]
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


@contextlib.contextmanager
def _same_draws_everywhere() -> Iterator[None]:
    """Hypothesis (6.1xx) sometimes draws numbers and strings found in the "local" modules loaded so
    far: which ones depends on the import order and on whether this package is installed editable or
    from a wheel (on a Dask worker). Drawing without them, the graders' inputs are the same on every
    machine and in every process."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover (another Hypothesis layout: nothing to switch off)
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    if original is None:  # pragma: no cover
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


@functools.cache
def draw(strategy_factory: Callable[[], Any], n: int) -> tuple:
    """``n`` deterministic examples of a hypothesis strategy (cached per process).

    Derandomized, database-free and independent of what else is loaded, so a re-grade sees exactly
    the same inputs, on any machine.
    """
    from hypothesis import given

    out: list = []

    @_hypothesis_settings(n, ("explicit", "generate"))
    @given(strategy_factory())
    def collect(example):
        if len(out) < n:
            out.append(example)

    with _same_draws_everywhere():
        collect()
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Classes of input: which a call belongs to, and its twin
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _signature(func: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(func)


def arguments(func: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The call's arguments by parameter name of ``func`` (the reference), defaults filled in."""
    try:
        bound = _signature(func).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return dict(bound.arguments)


def _is_default(value: Any, default: Any) -> bool:
    if default is inspect.Parameter.empty:
        return False
    if value is default:
        return True
    return isinstance(value, (int, float)) and isinstance(default, (int, float)) and value == default


def rebuild(func: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any], new: Mapping[str, Any]):
    """A call of ``func`` with the arguments ``new``, written as the original call was: the same
    positional parameters positional, the rest by keyword, trailing defaults left out."""
    params = _signature(func).parameters
    names = list(params)
    positional = [new[p] for p in names[: len(args)]]
    while positional and _is_default(positional[-1], params[names[len(positional) - 1]].default):
        positional.pop()
    rest = {
        p: new[p] for p in names[len(positional) :] if p in new and not _is_default(new[p], params[p].default)
    }
    return tuple(positional), rest


def memberships(graded_fn: Graded | None, func: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]):
    """The classes of input a call belongs to, in the graders' order (empty: an ordinary input)."""
    if graded_fn is None:
        return []
    named = arguments(func, args, kwargs)
    if named is None:
        return []
    return [c for c in graded_fn.classes if c.member(**named)]


def twin_call(cls: InputClass, func: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]):
    named = arguments(func, args, kwargs)
    if cls.twin is None or named is None:
        return None
    return rebuild(func, args, kwargs, {**named, **cls.twin(**named)})


# --------------------------------------------------------------------------------------------
# Running checks
# --------------------------------------------------------------------------------------------
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
    return call_outcome(func, args, kwargs)


def call_key(fn: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """A call as a string: equal for equal arguments (of equal dtypes)."""
    return json.dumps([fn, to_data(list(args)), {k: to_data(v) for k, v in sorted(kwargs.items())}])


def size_of(value: Any) -> int:
    try:
        return len(json.dumps(to_data(value)))
    except (TypeError, ValueError):
        return len(repr(value))


@dataclass
class Grader:
    """What a check function receives: the student's functions, the reference, and helpers.

    It offers properties the same ``call`` / ``array`` / ``close`` / ``fail`` as the public check's
    checker, and collects every failure with what is needed to charge it to one clause.
    """

    student: Caller
    reference: Mapping[str, Callable[..., Any]]
    graded: Graded | None = None  # the function being graded
    log: list[CallRecord] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    evidence: set[str] = field(default_factory=set)  # clauses with at least one input answered right
    check: Check | None = None  # the check running now
    _pending: list[tuple[list[Step], CheckFailed, str, int]] = field(default_factory=list)
    found: dict[str, list[str]] = field(default_factory=dict)  # check name -> the failures it found
    form_seen: bool = False  # a result of the promised form came back at least once
    public_calls: frozenset[str] = frozenset()  # call_key() of the public cases (and their twins)
    watch: RaiseWatch = field(default_factory=RaiseWatch)
    first_no_value: CheckFailed | None = None
    _seen: list[str] | None = None  # inside for_all: the clauses this example's failures go to
    _dry: bool = False  # while shrinking: failures are only looked at, not recorded
    _only: str | None = None  # record only failures charged to this clause
    _outcomes: dict[str, Outcome] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.watch = RaiseWatch(self.graded.raises if self.graded else None)

    # -- calling -----------------------------------------------------------------------------
    def ref(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        """The reference solution's result (trusted; arguments are copied first)."""
        outcome = reference_outcome(self.reference[fn], args, kwargs)
        if not outcome.ok:
            raise RuntimeError(f"reference {fn} raised {outcome.error}: {outcome.message}")
        return outcome.value

    def outcome(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        outcome = self.student.call(fn, *args, **kwargs)
        self.log.append(CallRecord(fn, args, kwargs, outcome))
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
        if self.graded is not None and fn == self.graded.function and not self._dry:
            self.watch.saw(outcome, expected)
        if outcome.ok and expected.ok and not any(f.kind == "form" for f in failures):
            self.form_seen = self.form_seen or call_key(fn, args, kwargs) not in self.public_calls
        if not failures:
            self._evidence(fn, args, kwargs)
            return outcome.value if outcome.ok else None
        size = size_of((args, kwargs))
        for exc in failures:
            if exc.kind == "form":
                self._charge(self.graded.form if self.graded and self.graded.form else self._base, exc, size)
            else:
                if exc.kind == "no-value" and self.first_no_value is None:
                    self.first_no_value = CheckFailed(str(exc), input=exc.input, obtained=exc.obtained)
                self._defer(self._steps(fn, args, kwargs, outcome, rtol, atol), exc, size)
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
                self.check.clause if self.check else self._base,
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

        For each clause charged here, a smaller failing input is looked for with hypothesis (bounded
        and deterministic), and the failure on it is what the student sees for that clause.
        """
        charged: set[str] = set()
        for example in draw(strategy_factory, n):
            charged.update(self._trying(body, example))
        for clause in sorted(charged):

            def charged_here(example: Any, clause: str = clause) -> bool:
                return clause in self._trying(body, example, dry=True)

            shrunk = _shrink(strategy_factory, charged_here)
            if shrunk is not None:
                self._trying(body, shrunk, only=clause)  # a smaller input for the message: never a new charge

    def _trying(
        self, body: Callable[[Any], None], example: Any, dry: bool = False, only: str | None = None
    ) -> set[str]:
        """Run ``body`` on one example; the clauses its failures are (provisionally) charged to.
        ``dry``: only find them out (while shrinking), record nothing; ``only``: record only the
        failures charged to that clause."""
        outer = self._seen, self._dry, self._only
        self._seen, self._dry, self._only = [], dry, only
        try:
            try:
                body(example)
            except CheckFailed as exc:
                self.record(exc, size_of(example))
            return set(self._seen)
        finally:
            self._seen, self._dry, self._only = outer

    # -- charging ------------------------------------------------------------------------------
    @property
    def _base(self) -> str:
        return self.graded.base if self.graded else BASE_CLAUSE

    def record(self, exc: CheckFailed, size: int) -> None:
        """A failure raised inside a check: a call that gave no value is charged by its input's class,
        a stated property that does not hold to the check's clause."""
        if not exc.input and self.log:  # a property: the call it made last is the input it failed on
            last = self.log[-1]
            exc.input = show_call(last.fn, last.args, last.kwargs)
        if exc.kind == "no-value" and exc.call is not None and exc.outcome is not None:
            fn, args, kwargs = exc.call
            self._defer(self._steps(fn, args, kwargs, exc.outcome, 1e-6, 1e-8), exc, size)
        else:
            self._charge(self.check.clause if self.check else self._base, exc, size)

    def _charge(self, clause: str, exc: CheckFailed, size: int, own: bool = True) -> None:
        if self._seen is not None:
            self._seen.append(clause)
        if self._dry or self._only not in (None, clause):
            return
        name = self._found(exc)
        self.failures.append(
            Failure(clause, str(exc), name, exc.input, exc.expected, exc.obtained, size, own)
        )

    def _defer(self, steps: list[Step], exc: CheckFailed, size: int) -> None:
        guess = resolve(steps, None, self._base)  # provisional: the evidence is not complete yet
        if self._seen is not None:
            self._seen.append(guess)
        if self._dry or self._only not in (None, guess):
            return
        self._pending.append((steps, exc, self._found(exc), size))

    def _found(self, exc: CheckFailed) -> str:
        name = self.check.name if self.check else ""
        self.found.setdefault(name, []).append(str(exc))
        return name

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
        self.evidence.update(evidence_for(found, must_raise, self._base))

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
        """Every clause's verdict, once all checks have run (the evidence is complete then)."""
        self.failures += settle(self._pending, self.evidence, self._base, self.watch)
        self._pending = []
        form = self.graded.form if self.graded else None
        return verdicts(
            clauses.values(), self.failures, unproven_form(form, self.form_seen, self.first_no_value)
        )

    @contextlib.contextmanager
    def running(self, chk: Check) -> Iterator[None]:
        outer, self.check = self.check, chk
        try:
            yield
        finally:
            self.check = outer


def _shrink(
    strategy_factory: Callable[[], Any], fails: Callable[[Any], bool], budget: int = SHRINK_EVALUATIONS
) -> Any | None:
    """A small input on which ``fails`` holds, found by hypothesis (``None`` when none is found in the budget)."""
    from hypothesis import find
    from hypothesis.errors import HypothesisException, NoSuchExample

    seen: dict[str, bool] = {}

    def predicate(example: Any) -> bool:
        key = repr(example)
        if key not in seen:
            if len(seen) >= budget:
                return False
            seen[key] = bool(fails(example))
        return seen[key]

    try:
        with _same_draws_everywhere():
            return find(
                strategy_factory(), predicate, settings=_hypothesis_settings(budget, ("generate", "shrink"))
            )
    except (NoSuchExample, HypothesisException):
        return None

"""What a grader module declares: each graded function's checks, classes of input, form clause,
misconceptions, how it builds on another graded function, and the students the self-validation
grades (found in the notebook's folder by ``pe_course.engine.discovery.load_suite``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..public_checks import BASE_CLAUSE


# --------------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------------
def other_values(value: Any, scale: float = 2, shift: float = 1) -> Any:
    """``value`` with other values of the same shape and kind, ``value * scale + shift`` (an int array
    stays int, a list a list): what most probes change (see :class:`Graded`)."""
    if isinstance(value, list):
        return [other_values(v, scale, shift) for v in value]
    if isinstance(value, np.ndarray):
        out = value * scale + shift
        return out.astype(value.dtype) if value.dtype.kind in "iu" and float(scale).is_integer() else out
    return value * scale + shift


@dataclass(frozen=True)
class Check:
    function: str
    name: str
    title: str
    clause: str  # the contract clause (e.g. "K2") of ``function`` that this check enforces
    run: Callable[[Any], None]
    # what the public check runs of it: a property of graders/<assignment>/_shared/properties.py and its public inputs
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
    # each predicate receives the call's arguments by name (tests/engine/test_contracts.py checks they are drawn)
    must_draw: tuple[tuple[str, Callable[..., bool]], ...] = ()
    # the clause that says "raise <error> exactly when ...": an ordinary valid input on which the
    # function raises that error is charged to it too (code raising everywhere does not earn it)
    raises: tuple[str, str] | None = None
    # the probe: receives the call's arguments by name and gives the ones to change so that the input
    # keeps its shapes, dtypes and classes but the reference's result changes (other table values,
    # another angle, ...); a real answer changes there too (pe_course.public_checks.evidence)
    probe: Callable[..., dict] | None = None


def graded(
    function: str,
    *classes: InputClass,
    form: str | None = None,
    form_shape: bool = False,
    must_draw: dict[str, Callable[..., bool]] | None = None,
    raises: tuple[str, str] | None = None,
    probe: Callable[..., dict] | None = None,
) -> Graded:
    """Declare (at module level) the classes of input and the form clause of graded ``function``;
    ``must_draw``: combinations of classes (or other inputs) the graders' own inputs must include;
    ``raises=("K4", "ValueError")``: the clause that says when that error is raised; ``probe``: the
    arguments to change for the same input with other values (see :class:`Graded`)."""
    return Graded(
        function,
        tuple(classes),
        form,
        form_shape,
        must_draw=tuple((must_draw or {}).items()),
        raises=raises,
        probe=probe,
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
    ``graders/<assignment>/_shared/properties.py``, which ships with the release) on each of ``inputs``."""

    def wrap(fn: Callable[[Any], None]):
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


@dataclass(frozen=True)
class Student:
    """Code the self-validation (``pe-course build``) grades, declared beside the notebook's checks."""

    kind: str  # "alternative" (full marks, nothing diagnosed), "careful" or "flawed"
    function: str
    implementation: Callable[..., Any]
    misconception: str | None = None  # careful: the one catalogued misconception it must be diagnosed with
    loses: frozenset[str] = field(default_factory=frozenset)  # flawed: exactly the clauses it must lose


def _student(kind: str, function: str, misconception: str | None = None, loses: frozenset[str] = frozenset()):
    def wrap(fn: Callable[..., Any]):
        fn.__pe_student__ = Student(kind, function, fn, misconception, loses)  # type: ignore[attr-defined]
        return fn

    return wrap


def alternative(function: str):
    """Declare a genuinely different correct implementation of ``function``: it must score full marks
    with no misconception diagnosed, by the graders and by the public check."""
    return _student("alternative", function)


def careful(function: str, misconception: str):
    """Declare otherwise careful code for ``function`` with one catalogued ``misconception`` in it: it
    must lose exactly one clause and be diagnosed with exactly that misconception."""
    return _student("careful", function, misconception)


def flawed(function: str, *clauses: str):
    """Declare code for ``function`` with one realistic slip: it must lose exactly ``clauses``, by the
    graders and by the public check."""
    return _student("flawed", function, loses=frozenset(clauses))

"""What a shipped property computes from its inputs alone (used by tests/build/test_release.py, section 8).

The public properties (``graders/<assignment>/_shared/properties.py``, shipped as ``public_checks/properties.py``)
may compare the student's results with each other, with their inputs, with 0 and ±1, and with numbers
handed to them as data; they must not compute a graded function, nor any number of its answer.

:func:`property_leaks` runs each property with the reference answering in the student's place and
records every value the property computes from its inputs alone: the value of each expression (a call,
an arithmetic operation, a comprehension) that uses none of the checker's results (the checker ``c``
and every name bound, anywhere in the property, from something that uses it) and is more than a
selection from its inputs (a name, an attribute, ``name[...]``, or a conversion of one such as
``float(dot)``: the data it was given, as given).
Strings, integers and booleans are left out (messages, counts, indices). Such a value leaks an answer
when it equals the reference's answer to a call the property makes, or to a graded function called
with the property's own arguments of the same names, or a row of such an answer, or one of its
numbers other than 0 and ±1.
"""

from __future__ import annotations

import ast
import copy
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pe_course.public_checks import as_array, assert_close

RECORD = "__record_independent_value__"


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bindings(func: ast.FunctionDef) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) of every binding inside ``func`` (assignments, loop and comprehension targets)."""
    pairs: list[tuple[ast.AST, ast.AST]] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            pairs += [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            pairs.append((node.target, node.value))
        elif isinstance(node, (ast.For, ast.comprehension)):
            pairs.append((node.target, node.iter))
        elif isinstance(node, ast.NamedExpr):
            pairs.append((node.target, node.value))
    return pairs


def _checker_names(func: ast.FunctionDef) -> set[str]:
    """The checker (first parameter) and every name bound from something that uses it. Flow-insensitive:
    a name with one such binding counts as the checker's everywhere (so nothing is recorded for it)."""
    tainted = {func.args.args[0].arg}
    changed = True
    while changed:
        changed = False
        for target, value in _bindings(func):
            new = _names(target) - tainted if _names(value) & tainted else set()
            if new:
                tainted |= new
                changed = True
    return tainted


CONVERSIONS = {"float", "int", "complex", "np.asarray", "np.array", "np.float64"}


def _selection(node: ast.AST) -> bool:
    """A name, an attribute, ``selection[...]``, or a conversion of one (``float(dot)``,
    ``np.asarray(ids, dtype=...)``): the data the property was given, as given."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Subscript):
        return _selection(node.value)
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) in CONVERSIONS
        and len(node.args) == 1
        and _selection(node.args[0])
    )


class _Instrument(ast.NodeTransformer):
    """Wraps every expression of a property that it computes from its inputs alone in ``RECORD(...)``."""

    COMPUTED = (ast.Call, ast.BinOp, ast.UnaryOp, ast.ListComp)

    def __init__(self, local: set[str], tainted: set[str]) -> None:
        self.local, self.tainted = local, tainted

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return node  # message text

    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        if isinstance(node, self.COMPUTED) and not _selection(node):
            names = _names(node)
            if names & self.local and not names & self.tainted:
                return ast.copy_location(ast.Call(ast.Name(RECORD, ast.Load()), [node], []), node)
        return node


def instrumented(source: str) -> ast.Module:
    """``source`` with every top-level function's independent computations wrapped in ``RECORD``."""
    tree = ast.parse(source)
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef) and node.args.args:
            local = {a.arg for a in node.args.args} | {
                n for target, _ in _bindings(node) for n in _names(target)
            }
            tree.body[i] = _Instrument(local, _checker_names(node)).visit(node)
    return ast.fix_missing_locations(tree)


class ReferenceChecker:
    """The checker a property receives, with the reference answering every call (on copies)."""

    def __init__(self, reference: Mapping[str, Callable[..., Any]]) -> None:
        self.reference = reference
        self.answers: list[tuple[str, tuple, Any]] = []

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        value = self.reference[fn](*copy.deepcopy(args), **copy.deepcopy(kwargs))
        self.answers.append((fn, args, value))
        return value

    array = staticmethod(as_array)
    close = staticmethod(assert_close)

    @staticmethod
    def fail(message: str, input: str = "") -> None:
        raise AssertionError(f"the reference fails a shipped property: {message}")


def _numeric(value: Any) -> np.ndarray | None:
    if value is None or isinstance(value, (bool, int, str, np.integer, np.bool_)):
        return None
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 (ragged or odd: not a number of an answer)
        return None
    return array.astype(float) if array.dtype.kind in "fc" and array.size else None


def _trivial(x: np.ndarray) -> bool:
    return bool(np.all(np.isclose(np.abs(x), 0.0, atol=1e-12) | np.isclose(np.abs(x), 1.0, atol=1e-12)))


def _leak(x: np.ndarray, answer: np.ndarray) -> str:
    """How ``x`` gives away ``answer`` ("" when it does not)."""
    close = dict(rtol=1e-9, atol=1e-12)
    if x.shape == answer.shape and np.allclose(x, answer, **close):
        return "the whole answer"
    if _trivial(x):
        return ""
    if (
        answer.ndim >= 2
        and x.shape == answer.shape[1:]
        and any(np.allclose(x, row, **close) for row in answer)
    ):
        return "a row of the answer"
    if x.size == 1 and np.any(np.isclose(answer.ravel(), x.item(), **close)):
        return "a number of the answer"
    return ""


def _answers_by_name(prop: Callable[..., Any], args: tuple, reference: Mapping[str, Callable[..., Any]]):
    """The reference's answers to each graded function called with the property's arguments of the same
    names (``frequencies(d_model)`` for a property of ``(c, length, d_model)``)."""
    given = dict(zip(list(inspect.signature(prop).parameters)[1:], args, strict=False))
    for fn, func in reference.items():
        needed = [
            p.name
            for p in inspect.signature(func).parameters.values()
            if p.default is inspect.Parameter.empty
        ]
        if needed and all(n in given for n in needed):
            try:
                yield fn, tuple(given[n] for n in needed), func(*copy.deepcopy([given[n] for n in needed]))
            except Exception:  # noqa: BLE001 (not an input of that function)
                continue


def property_leaks(
    source: str, entries: list[tuple[str, tuple]], reference: Mapping[str, Callable[..., Any]]
) -> list[str]:
    """Every value the properties in ``source`` compute from their inputs alone that gives away a
    graded answer, for each ``(property name, arguments)`` of ``entries``."""
    leaks = []
    for name, args in entries:
        recorded: list[Any] = []

        def record(value: Any, recorded: list[Any] = recorded) -> Any:
            recorded.append(copy.deepcopy(value))
            return value

        namespace: dict[str, Any] = {"__name__": "shipped_properties", RECORD: record}
        exec(compile(instrumented(source), "<shipped properties.py>", "exec"), namespace)  # noqa: S102 (our release)
        checker = ReferenceChecker(reference)
        with np.errstate(all="ignore"):
            namespace[name](checker, *copy.deepcopy(args))
        answers = [(fn, a, v) for fn, a, v in checker.answers]
        answers += list(_answers_by_name(namespace[name], args, reference))
        for value in recorded:
            x = _numeric(value)
            if x is None:
                continue
            for fn, call_args, answer in answers:
                for part in answer if isinstance(answer, tuple) else (answer,):
                    expected = _numeric(part)
                    how = _leak(x, expected) if expected is not None else ""
                    if how:
                        shown = np.array2string(x, precision=4, threshold=6)
                        leaks.append(
                            f"{name}: computes {how} of {fn} on {len(call_args)} argument(s): {shown}"
                        )
    return sorted(set(leaks))

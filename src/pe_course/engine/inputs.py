"""A call's inputs as the classes of input see them: its arguments by name, the classes it belongs
to, its twin, and a key and a size for it."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from ..public_checks import to_data
from .declarations import Graded, InputClass


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


def probe_call(graded_fn: Graded | None, func: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]):
    """The call's *probe*: the same input with other values (``Graded.probe``), or None."""
    named = arguments(func, args, kwargs)
    if graded_fn is None or graded_fn.probe is None or named is None:
        return None
    change = graded_fn.probe(**named)
    if not change:
        return None
    return rebuild(func, args, kwargs, {**named, **change})


def call_key(fn: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """A call as a string: equal for equal arguments (of equal dtypes)."""
    return json.dumps([fn, to_data(list(args)), {k: to_data(v) for k, v in sorted(kwargs.items())}])


def size_of(value: Any) -> int:
    try:
        return len(json.dumps(to_data(value)))
    except (TypeError, ValueError):
        return len(repr(value))

"""Students whose code does nothing useful: they must earn nothing (issue 29).

Each is made for one graded function from its reference solution, which it uses only for the shape
of the result and, in the "with validation" kinds, for when to raise: code that returns ``None``, a
constant or zeros of the right shape, its own first argument, noise of the right shape (seeded once,
or drawn afresh on every call), raises for everything, or validates its input correctly and then
returns zeros or raises ``NameError``. ``pe-course build`` refuses a suite under which any of them
earns a point, by the graders or by the public check (:mod:`pe_course.build.self_validation`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np


def _result_like(reference: Callable[..., Any], args: tuple, kwargs: dict, fill: Callable[[tuple], Any]):
    """``fill(shape)`` for every array of the reference's result (a tuple stays a tuple); a number where
    the reference raises or gives a number."""
    try:
        expected = reference(*args, **kwargs)
    except Exception:  # noqa: BLE001 (without validation, an input the reference refuses still gets an answer)
        return fill(())
    if isinstance(expected, tuple):
        return tuple(fill(np.shape(part)) for part in expected)
    return fill(np.shape(expected))


def _validated(reference: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Raise where the reference raises (the stated errors, checked first), else nothing."""
    reference(*args, **kwargs)


def degenerate_students(reference: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The degenerate students of the function whose reference solution is ``reference``, by name."""
    fresh = itertools.count()

    def scalar_or(array: np.ndarray) -> Any:
        return float(array) if array.shape == () else array

    def none(*args: Any, **kwargs: Any) -> Any:
        return None

    def zeros(*args: Any, **kwargs: Any) -> Any:
        return _result_like(reference, args, kwargs, lambda shape: scalar_or(np.zeros(shape)))

    def constant(*args: Any, **kwargs: Any) -> Any:
        return _result_like(reference, args, kwargs, lambda shape: scalar_or(np.full(shape, 0.5)))

    def echo(*args: Any, **kwargs: Any) -> Any:
        return args[0] if args else next(iter(kwargs.values()), None)

    def seeded_noise(*args: Any, **kwargs: Any) -> Any:
        rng = np.random.default_rng(0)
        return _result_like(reference, args, kwargs, lambda shape: scalar_or(rng.standard_normal(shape)))

    def fresh_noise(*args: Any, **kwargs: Any) -> Any:
        rng = np.random.default_rng(next(fresh))
        return _result_like(reference, args, kwargs, lambda shape: scalar_or(rng.standard_normal(shape)))

    def raises(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("input tidak sah")

    def validated_zeros(*args: Any, **kwargs: Any) -> Any:
        _validated(reference, args, kwargs)
        return zeros(*args, **kwargs)

    def validated_then_name_error(*args: Any, **kwargs: Any) -> Any:
        _validated(reference, args, kwargs)
        raise NameError("name 'hasil' is not defined")

    return {
        f.__name__: f
        for f in (
            none,
            zeros,
            constant,
            echo,
            seeded_noise,
            fresh_noise,
            raises,
            validated_zeros,
            validated_then_name_error,
        )
    }

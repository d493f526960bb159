"""Generated inputs: deterministic examples of the graders' hypothesis strategies, and a small
failing input found by shrinking (the same on every machine and in every process)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from . import draw_cache

# A failing generated check looks for a smaller failing input with at most this many distinct
# evaluations (a count, not a time: a re-grade must find the same input).
SHRINK_EVALUATIONS = 60
# A failing input this small (characters of its JSON) is shown as it is, without shrinking.
SMALL_ENOUGH = 60


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
    the same inputs, on any machine; kept on disk for the next process (:mod:`.draw_cache`).
    """
    from hypothesis import given

    kept = draw_cache.path_for(strategy_factory, n)
    examples = draw_cache.load(kept, n) if kept is not None else None
    if examples is not None:
        return examples
    out: list = []

    @_hypothesis_settings(n, ("explicit", "generate"))
    @given(strategy_factory())
    def collect(example):
        if len(out) < n:
            out.append(example)

    with _same_draws_everywhere():
        collect()
    if kept is not None:
        draw_cache.store(kept, tuple(out))
    return tuple(out)


def shrink(
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

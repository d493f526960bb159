"""Example cases stored as data in a grader suite's ``cases/<function>.json``.

Each case: ``{"name": ..., "args": [...], "kwargs": {...}, "public": true, "atol": 1e-6}``.
``public``: the case ships with the release, with its expected result computed from the reference
(``pe-course release`` writes ``public_checks/<notebook>.json``), and the public check in the
student's kernel runs it; every case, public or not, is also one of the hidden graders' inputs. An
argument written as ``{"array": [...], "dtype": "float64"}`` becomes a NumPy array; anything else is
passed as it is. Only inputs are stored: expected values come from the reference solution.

A graded function's cases are ``cases/<function>.json`` in its notebook's folder of the grader suite
(``graders/<assignment>/<notebook>/``): a check module binds them with ``run_cases =
case_runner(__file__)`` and calls ``run_cases(g, function)``; the release reads
``GraderSuite.cases(function)``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..public_checks import from_data, to_data
from .inputs import call_key, memberships, twin_call

MAX_PUBLIC_DEPTH = 4  # twin steps a public case may need (its data nests that deep; keep public cases simple)


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple
    public: bool
    kwargs: dict = field(default_factory=dict)
    tolerance: dict = field(default_factory=dict)  # rtol / atol when not the default


def _value(spec: Any) -> Any:
    if isinstance(spec, dict) and "array" in spec:
        arr = np.asarray(spec["array"], dtype=spec.get("dtype", "float64"))
        return arr.reshape(spec["shape"]) if "shape" in spec else arr
    return spec


def read_cases(path: Path) -> tuple[Case, ...]:
    """The cases of one ``<function>.json`` file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return tuple(
        Case(
            c["name"],
            tuple(_value(a) for a in c["args"]),
            bool(c.get("public", False)),
            {k: _value(v) for k, v in c.get("kwargs", {}).items()},
            {k: float(c[k]) for k in ("rtol", "atol") if k in c},
        )
        for c in data
    )


def case_reader(folder: Path) -> tuple[Callable[[str], tuple[Case, ...]], Callable[[Any, str], None]]:
    """``(cases, run_cases)`` for the suite whose ``cases/`` is ``folder``: ``cases(function)`` reads
    ``<function>.json`` (once), ``run_cases(g, function)`` compares every case with the reference."""

    @functools.cache
    def cases(function: str) -> tuple[Case, ...]:
        return read_cases(Path(folder) / f"{function}.json")

    def run_cases(g: Any, function: str) -> None:
        """Every case of ``function`` (public and hidden) compared with the reference."""
        for case in cases(function):
            g.expect(function, *case.args, **case.kwargs, **case.tolerance)

    return cases, run_cases


def case_runner(module_file: str) -> Callable[[Any, str], None]:
    """``run_cases(g, function)`` for a check module: every case of ``cases/<function>.json`` in the
    module's folder, compared with the reference."""
    return case_reader(Path(module_file).parent / "cases")[1]


def public_calls(suite: Any, reference: Any, fn: str) -> frozenset[str]:
    """``call_key`` of every call the public check of ``fn`` makes from its shipped data: each public
    case and, class by class, its twins (the arguments as the student's copy reads them back)."""
    func, graded = reference[fn], suite.graded.get(fn)
    keys: set[str] = set()

    def walk(args: tuple, kwargs: dict, depth: int) -> None:
        shipped = (
            tuple(from_data(to_data(a)) for a in args),
            {k: from_data(to_data(v)) for k, v in kwargs.items()},
        )
        keys.add(call_key(fn, *shipped))
        if depth >= MAX_PUBLIC_DEPTH:
            return  # deeper than a public case may go: the release refuses it
        for cls in memberships(graded, func, args, kwargs):
            twin = twin_call(cls, func, args, kwargs)
            if twin is not None:
                walk(twin[0], twin[1], depth + 1)

    for case in suite.cases(fn):
        if case.public:
            walk(case.args, case.kwargs, 0)
    return frozenset(keys)

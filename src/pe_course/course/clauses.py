"""Each graded function's contract, as the notebook states it to students.

Above every graded function the source notebook lists what the graders check, as numbered
clauses the student can find again in the feedback::

    **Ketentuan yang dinilai untuk `one_hot`:**

    - **K1 (0.5 poin).** Baris ke-`t` berisi `1.0` tepat di kolom `ids[t]` ...
    - **K2 (0.25 poin).** `ids` boleh kosong (`T = 0`) ...

A clause is the unit of credit: it earns its points when nothing is charged to it. The notebook is
the single source of the clauses' text and points (the test cell's nbgrader points are their sum,
``pe-course release`` refuses otherwise); every check in ``graders/`` names one clause
(``@check(..., clause="K2")``), and ``tests/engine/test_contracts.py`` keeps the two bound both ways.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from ..public_checks import Clause

HEADER = re.compile(r"^\*\*Ketentuan yang dinilai untuk `(\w+)`:?\*\*:?")
CLAUSE = re.compile(r"^- \*\*(K\d+)(?: \((\d+(?:\.\d+)?) poin\))?\.\*\*\s+(.*)$")


def parse_contracts(nb: Any) -> dict[str, dict[str, Clause]]:
    """``{function: {clause id: Clause(id, text, points)}}`` from the notebook's markdown cells
    (a clause without "(N poin)" has 0 points; the tests require every clause to state them)."""
    texts: dict[str, dict[str, str]] = {}
    points: dict[tuple[str, str], float] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        source = source if isinstance(source, str) else "".join(source)
        function: str | None = None
        last: str | None = None
        for line in source.splitlines():
            header = HEADER.match(line.strip())
            if header:
                function, last = header.group(1), None
                texts.setdefault(function, {})
                continue
            if function is None:
                continue
            clause = CLAUSE.match(line)
            if clause:
                last = clause.group(1)
                texts[function][last] = clause.group(3).strip()
                points[(function, last)] = float(clause.group(2) or 0)
            elif last and line.startswith("  ") and line.strip():
                texts[function][last] += " " + line.strip()  # a clause continued on the next line
            elif texts[function] and not line.strip():
                function, last = None, None  # a blank line after the list ends it
    return {
        fn: {k: Clause(k, text, points[(fn, k)]) for k, text in clauses.items()}
        for fn, clauses in texts.items()
    }


def domain(fn: Callable[..., str | None]) -> Callable[..., str | None]:
    """Declare the contract's domain of the graded function of the same name (in the notebook's
    ``contracts.py``): it takes a call's arguments as that function does (defaults filled in) and
    returns ``None`` for an input the contract covers, else the reason it does not; a call that does
    not fit the signature is outside the domain."""
    signature = inspect.signature(fn)

    def bound(*args: Any, **kwargs: Any) -> str | None:
        try:
            call = signature.bind(*args, **kwargs)
        except TypeError as exc:
            return f"argumen tidak sesuai: {exc}"
        return fn(*call.args, **call.kwargs)

    fn.__pe_domain__ = bound  # type: ignore[attr-defined]
    return fn

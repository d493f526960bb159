"""Each graded function's contract, as the notebook states it to students.

Above every graded function the source notebook lists what the graders check, as numbered
clauses the student can find again in the feedback::

    **Ketentuan yang dinilai untuk `one_hot`:**

    - **K1.** Baris ke-`t` berisi `1.0` tepat di kolom `ids[t]` ...
    - **K2.** `ids` boleh kosong (`T = 0`) ...

Every check in ``graders/`` names one clause (``@check(..., clause="K2")``); the notebook is the
single source of the clauses' text. ``tests/test_contracts.py`` keeps the two bound both ways.
"""

from __future__ import annotations

import re
from typing import Any

HEADER = re.compile(r"^\*\*Ketentuan yang dinilai untuk `(\w+)`:?\*\*:?")
CLAUSE = re.compile(r"^- \*\*(K\d+)\.\*\*\s+(.*)$")


def parse_contracts(nb: Any) -> dict[str, dict[str, str]]:
    """``{function: {clause id: text}}`` from the notebook's markdown cells."""
    contracts: dict[str, dict[str, str]] = {}
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
                contracts.setdefault(function, {})
                continue
            if function is None:
                continue
            clause = CLAUSE.match(line)
            if clause:
                last = clause.group(1)
                contracts[function][last] = clause.group(2).strip()
            elif last and line.startswith("  ") and line.strip():
                contracts[function][last] += " " + line.strip()  # a clause continued on the next line
            elif contracts[function] and not line.strip():
                function, last = None, None  # a blank line after the list ends it
    return contracts

"""What older records wrote, read as today's (the record's classes then read them as any other):

- version 2: a note is a string, ``"kind: detail"``;
- version 3: a check had its own points and clause; read back, its clauses carry their sums;
- version 5 and before: a diagnosed misconception is its id alone (no hint).
"""

from __future__ import annotations

import math
from collections.abc import Container
from typing import Any


def note(value: str, kinds: Container[str]) -> dict[str, str]:
    """A version-2 note; text that names no known kind is a plain note's detail."""
    kind, _, detail = value.partition(": ")
    if kind not in kinds:
        kind, detail = "note", value
    return {"kind": kind, "detail": detail}


def cell(data: dict[str, Any]) -> dict[str, Any]:
    """A test cell's data with its clauses (from its checks, before version 4) and its misconceptions
    as ``{id, hint}`` (a hint it never kept is empty)."""
    found = dict(data)
    if "clauses" not in data and isinstance(data.get("checks"), list):
        found["clauses"] = _clauses_of_v3(data["checks"])
    if isinstance(data.get("misconceptions"), list):
        found["misconceptions"] = [
            {"id": m, "hint": ""} if isinstance(m, str) else m for m in data["misconceptions"]
        ]
    return found


def _clauses_of_v3(checks: list) -> list[dict[str, Any]]:
    """A version-3 record's checks (each with points and its clause) as clauses."""
    found: dict[str, dict[str, Any]] = {}
    for chk in checks:
        if not isinstance(chk, dict):
            continue
        key = _text(chk.get("clause"), "?")
        c = found.setdefault(
            key,
            {"clause": key, "text": _text(chk.get("clause_text")), "points": 0.0, "max_points": 0.0}
            | {"passed": True, "checks": []},
        )
        c["points"] += _number(chk.get("points"))
        c["max_points"] += _number(chk.get("max_points"))
        if chk.get("passed") is not True:
            if c["passed"]:
                c |= {k: _text(chk.get(k)) for k in ("message", "input", "expected", "obtained")}
            c["passed"] = False
            c["checks"].append(_text(chk.get("name"), "?"))
    return list(found.values())


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)

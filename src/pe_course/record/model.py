"""The grading record: what the hidden graders decided for one notebook (``<notebook>.grading.json``).

One typed record, written by the autograde step (``ScoreWithGraders``) and read back by
``pe-course grade``'s summary, the report and the tests. Statuses and note kinds are enums; a note
is ``Note(kind, detail)``; "needs attention" is :meth:`GradingRecord.attention`, in one place.
``docs/grading-record.schema.json`` is generated from these classes (``python -m pe_course.record_schema``)
and checked against them by the tests.

Records are read back as untrusted data (a student cannot write them, but a damaged or hand-edited
file must not stop a report): :meth:`GradingRecord.from_dict` keeps what is well-formed and drops
the rest. Version 2 and 3 records (notes as ``"kind: detail"`` strings; points per check instead of
per clause) are still read.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from .attention import UNISOLATED, resource_attention

# 2: checks carry their contract clause and failing input; 3: notes are {kind, detail};
# 4: clauses are the unit of credit (points, what was charged and why); checks only say what they found
# 5: the graders' version that wrote it; what changed since the record it replaced (a regrade)
RECORD_VERSION = 5
MAX_RECORD_BYTES = 20 * 1024 * 1024
MAX_NOTES = 50  # per record read back: a damaged record cannot flood a report


class CellStatus(str, Enum):
    """How grading a test cell's function went (the score says how well)."""

    OK = "ok"
    MISSING_FUNCTION = "missing-function"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    RESOURCE_LIMIT = "resource-limit"
    ERROR = "error"  # raised on every call, or the graders failed

    def __str__(self) -> str:
        return self.value


class NoteKind(str, Enum):
    """Why a note was written on a notebook's record (each is worth an instructor's look)."""

    UNREADABLE_NOTEBOOK = "unreadable-notebook"
    REPAIRED_METADATA = "repaired-metadata"
    DROPPED_METADATA = "dropped-metadata"
    DUPLICATE_CELL = "duplicate-cell"
    RESTORED_CELL = "restored-cell"
    EXECUTION = "execution"
    GRADER_ERROR = "grader-error"
    SUSPECTED_TAMPERING = "suspected-tampering"
    NO_GRADED_FUNCTIONS = "no-graded-functions"
    NOTE = "note"  # anything else (e.g. an unknown kind in an old record)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else str(self.kind)

    @classmethod
    def parse(cls, value: Any) -> Note | None:
        """A note from a record: ``{"kind", "detail"}`` (version 3) or ``"kind: detail"`` (version 2)."""
        if isinstance(value, dict):
            kind, detail = value.get("kind"), value.get("detail", "")
        elif isinstance(value, str):
            kind, _, detail = value.partition(": ")
            if kind not in NoteKind._value2member_map_:
                kind, detail = NoteKind.NOTE.value, value
        else:
            return None
        if not isinstance(detail, str):
            detail = ""
        try:
            return cls(NoteKind(kind), detail[:1000])
        except ValueError:
            return cls(NoteKind.NOTE, f"{str(kind)[:40]}: {detail[:1000]}")


@dataclass
class CheckResult:
    """One check: the clause it enforces and whether it found a failure (charged to whichever
    clause the charging rule names, see :mod:`pe_course.public_checks`)."""

    name: str
    title: str
    passed: bool
    clause: str = ""  # the contract clause of the function this check enforces ("K2")
    message: str = ""  # the first failure it found


@dataclass
class ClauseResult:
    """One clause of a function's contract: the unit of credit, all or nothing."""

    clause: str  # "K2"
    text: str  # as the notebook states it
    points: float  # earned
    max_points: float
    passed: bool
    message: str = ""  # the failure charged here (the smallest input found), in Indonesian
    input: str = ""  # that failing call, e.g. "one_hot([], 4)"
    expected: str = ""
    obtained: str = ""
    checks: list[str] = field(default_factory=list)  # the checks whose failures were charged here
    note: str = ""  # passed, but its own inputs failed as another clause's mistake (look again later)


@dataclass
class CellResult:
    """One test cell ``test_<function>``: its score from the checks, status, misconceptions."""

    grade_id: str
    function: str
    score: float
    max_score: float
    status: CellStatus = CellStatus.OK
    clauses: list[ClauseResult] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    misconceptions: list[dict[str, str]] = field(default_factory=list)  # {id, hint}

    @property
    def lost(self) -> list[ClauseResult]:
        return [c for c in self.clauses if not c.passed]


@dataclass(frozen=True)
class Attention:
    """Why a notebook needs an instructor's look: one kind (a status, note kind or resource finding)."""

    kind: str
    detail: str = ""


@dataclass
class GradingRecord:
    """What the graders decided for one notebook of one student."""

    notebook: str
    cells: list[CellResult]
    isolation: str
    cell_errors: list[dict] = field(default_factory=list)
    timed_out_cells: list[int] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    seconds: float = 0.0
    resources: dict[str, dict] = field(default_factory=dict)  # run ("execute", "score") -> Limits.record()
    student: str | None = None
    assignment: str | None = None
    version: int = RECORD_VERSION
    graders_version: str = ""  # hash of graders/<assignment>/ and release/<assignment>/ (regrade.py)
    regrade: dict[str, Any] | None = None  # what changed since the record this one replaced (regrade.py)

    @property
    def score(self) -> float:
        return round(sum(c.score for c in self.cells), 6)

    @property
    def max_score(self) -> float:
        return round(sum(c.max_score for c in self.cells), 6)

    def cell(self, grade_id: str) -> CellResult | None:
        return next((c for c in self.cells if c.grade_id == grade_id), None)

    def attention(self) -> list[Attention]:
        """Everything in this record worth an instructor's look (the only place this is decided)."""
        found = [Attention(note.kind.value, note.detail) for note in self.notes[:MAX_NOTES]]
        if self.timed_out_cells:
            found.append(
                Attention(
                    "timeout",
                    f"notebook cell(s) {', '.join(map(str, self.timed_out_cells[:20]))} "
                    "timed out while the notebook ran",
                )
            )
        for kind, detail in resource_attention(self.resources):
            found.append(Attention(kind, detail))
        for cell in self.cells:
            if cell.status in (CellStatus.TIMEOUT, CellStatus.CRASHED, CellStatus.RESOURCE_LIMIT):
                found.append(Attention(cell.status.value, f"{cell.grade_id} ({cell.function})"))
        if self.unisolated:
            found.append(Attention("unisolated", "graded without bubblewrap (opted in with --unisolated)"))
        return found

    @property
    def unisolated(self) -> bool:
        """Graded without bubblewrap (the instructor's opt-in for trusted code): the isolation line says so."""
        return self.isolation.startswith(UNISOLATED)

    # -- JSON ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        cells: list[dict[str, Any]] = []
        data: dict[str, Any] = {
            "version": RECORD_VERSION,
            "student": self.student,
            "assignment": self.assignment,
            "notebook": self.notebook,
            "score": self.score,
            "max_score": self.max_score,
            "isolation": self.isolation,
            "seconds": round(self.seconds, 3),
            "notes": [{"kind": n.kind.value, "detail": n.detail} for n in self.notes],
            "cell_errors": self.cell_errors,
            "timed_out_cells": self.timed_out_cells,
            "resources": self.resources,
            "graders_version": self.graders_version,
            "regrade": self.regrade,
            "cells": cells,
        }
        for c in self.cells:
            cells.append(
                {
                    "grade_id": c.grade_id,
                    "function": c.function,
                    "score": c.score,
                    "max_score": c.max_score,
                    "status": CellStatus(c.status).value,
                    "clauses": [asdict(k) for k in c.clauses],
                    "checks": [asdict(k) for k in c.checks],
                    "misconceptions": [m["id"] for m in c.misconceptions],
                }
            )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradingRecord:
        """A record from JSON data, keeping only what is well-formed (see the module docstring)."""
        cells = [cell for cell in map(_cell_from_dict, _list(data.get("cells"))) if cell is not None]
        notes = [note for note in map(Note.parse, _list(data.get("notes"))[:MAX_NOTES]) if note is not None]
        version = data.get("version")
        return cls(
            notebook=_text(data.get("notebook")),
            cells=cells,
            isolation=_text(data.get("isolation")),
            cell_errors=[e for e in _list(data.get("cell_errors")) if isinstance(e, dict)],
            timed_out_cells=[i for i in _list(data.get("timed_out_cells")) if isinstance(i, int)],
            notes=notes,
            seconds=_number(data.get("seconds")),
            resources=data["resources"] if isinstance(data.get("resources"), dict) else {},
            student=data.get("student") if isinstance(data.get("student"), str) else None,
            assignment=data.get("assignment") if isinstance(data.get("assignment"), str) else None,
            version=version if isinstance(version, int) else 0,
            graders_version=_text(data.get("graders_version"))[:200],
            regrade=data["regrade"] if isinstance(data.get("regrade"), dict) else None,
        )

    def write(self, path: Path) -> Path:
        atomic_write(Path(path), json.dumps(self.to_dict(), indent=2, ensure_ascii=False))
        return Path(path)

    @classmethod
    def read(cls, path: Path) -> GradingRecord:
        """Raises ``FileNotFoundError`` when there is none, ``ValueError`` when it cannot be read."""
        path = Path(path)
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise ValueError(f"larger than {MAX_RECORD_BYTES // 2**20} MB")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise ValueError(str(exc)) from None
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return cls.from_dict(data)


def notebook_attention(
    submitted: Path, graded: Path, student: str, notebook: str
) -> tuple[GradingRecord | None, list[Attention]]:
    """One notebook of one student: its record (if readable) and everything in it worth a look.

    ``submitted`` and ``graded`` are the student's folders of the assignment. The only place where
    "needs attention" is decided: ``pe-course grade``'s summary and the report both ask here.
    """
    if not (submitted / f"{notebook}.ipynb").is_file() and not (graded / f"{notebook}.ipynb").is_file():
        return None, [Attention("missing-notebook")]
    try:
        record = GradingRecord.read(graded / f"{notebook}.grading.json")
    except FileNotFoundError:
        return None, [Attention("no-grading-record")]
    except (OSError, ValueError) as exc:
        return None, [Attention("unreadable-grading-record", f"{type(exc).__name__}: {str(exc)[:200]}")]
    found = []
    if record.student is not None and record.student != student:
        found.append(Attention("record-mismatch", f"record is for {record.student[:200]}"))
    return record, found + record.attention()


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a file so that a reader sees the old content or the new, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _cell_from_dict(data: Any) -> CellResult | None:
    if not isinstance(data, dict):
        return None
    gid = _text(data.get("grade_id"))
    try:
        status = CellStatus(data.get("status"))
    except ValueError:
        status = CellStatus.ERROR
    checks = []
    for chk in _list(data.get("checks")):
        if not isinstance(chk, dict):
            continue
        checks.append(
            CheckResult(
                name=_text(chk.get("name"), "?"),
                title=_text(chk.get("title"), _text(chk.get("name"), "?")),
                passed=chk.get("passed") is True,
                clause=_text(chk.get("clause")),
                message=_text(chk.get("message")),
            )
        )
    clauses = [c for c in map(_clause_from_dict, _list(data.get("clauses"))) if c is not None]
    if not clauses and "clauses" not in data:  # a version-3 record: each check had its own points
        clauses = _clauses_of_v3(_list(data.get("checks")))
    misconceptions = [
        {"id": m, "hint": ""} for m in _list(data.get("misconceptions")) if isinstance(m, str) and m
    ]
    return CellResult(
        gid,
        _text(data.get("function"), gid.removeprefix("test_")),
        _number(data.get("score")),
        _number(data.get("max_score")),
        status,
        clauses,
        checks,
        misconceptions,
    )


_CLAUSE_TEXTS = ("message", "input", "expected", "obtained", "note")


def _clause_from_dict(data: Any) -> ClauseResult | None:
    if not isinstance(data, dict) or not _text(data.get("clause")):
        return None
    return ClauseResult(
        clause=_text(data.get("clause")),
        text=_text(data.get("text")),
        points=_number(data.get("points")),
        max_points=_number(data.get("max_points")),
        passed=data.get("passed") is True,
        checks=[n for n in _list(data.get("checks")) if isinstance(n, str)][:50],
        **{k: _text(data.get(k)) for k in _CLAUSE_TEXTS},
    )


def _clauses_of_v3(checks: list) -> list[ClauseResult]:
    """A version-3 record's checks (each with points and its clause) read as clauses."""
    found: dict[str, ClauseResult] = {}
    for chk in checks:
        if not isinstance(chk, dict):
            continue
        key = _text(chk.get("clause"), "?")
        c = found.setdefault(key, ClauseResult(key, _text(chk.get("clause_text")), 0.0, 0.0, True))
        c.points += _number(chk.get("points"))
        c.max_points += _number(chk.get("max_points"))
        if chk.get("passed") is not True:
            if c.passed:
                c.message, c.input = _text(chk.get("message")), _text(chk.get("input"))
                c.expected, c.obtained = _text(chk.get("expected")), _text(chk.get("obtained"))
            c.passed = False
            c.checks.append(_text(chk.get("name"), "?"))
    return list(found.values())

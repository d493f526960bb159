"""The grading record: what the hidden graders decided for one notebook (``<notebook>.grading.json``).

One typed record, written by the autograde step (``ScoreWithGraders``) and read back by
``pe-course grade``'s summary, the report and the tests. Statuses and note kinds are enums
(:mod:`.outcomes`); a note is ``Note(kind, detail)``; a diagnosed misconception keeps the hint its
student was given, so the report shows it from the record alone. These classes are the record's shape:
its JSON (:mod:`.codec`) and its schema (:mod:`.schema`, ``docs/grading-record.schema.json``) are read
from their fields.

Records are read back as untrusted data: :meth:`GradingRecord.from_dict` keeps what is well-formed and
drops the rest. Records of versions 2 to 5 are still read (:mod:`.legacy`).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from . import legacy
from .codec import read_fields, to_json
from .outcomes import UNISOLATED, CellStatus, NoteKind

# 2: checks carry their contract clause and failing input; 3: notes are {kind, detail};
# 4: clauses are the unit of credit (points, what was charged and why); checks only say what they found
# 5: the graders' version that wrote it; what changed since the record it replaced (a regrade)
# 6: a diagnosed misconception keeps its hint ({id, hint}; before, its id alone)
RECORD_VERSION = 6
MAX_RECORD_BYTES = 20 * 1024 * 1024
MAX_NOTES = 50  # per record read back: a damaged record cannot flood a report


def _doc(text: str, **more: Any) -> dict[str, Any]:
    """A field's metadata: its description in the schema, and how it is read back (:mod:`.codec`)."""
    return {"doc": text, **more}


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    detail: str = field(default="", metadata={"most": 1000})

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else str(self.kind)

    @classmethod
    def from_dict(cls, value: Any) -> Note | None:
        """A note from a record: ``{"kind", "detail"}``, or ``"kind: detail"`` (version 2); an unknown
        kind is kept in the detail of a plain note."""
        if isinstance(value, str):
            value = legacy.note(value, NoteKind._value2member_map_)
        if not isinstance(value, dict):
            return None
        kind, detail = value.get("kind"), read_fields(cls, value | {"kind": NoteKind.NOTE})["detail"]
        try:
            return cls(NoteKind(kind), detail)
        except ValueError:
            return cls(NoteKind.NOTE, f"{str(kind)[:40]}: {detail}")


@dataclass
class CheckResult:
    """One check: the clause it enforces and whether it found a failure (charged to whichever
    clause the charging rule names, see :mod:`pe_course.public_checks`)."""

    name: str = field(metadata={"unreadable": "?"})
    title: str  # its name when a record has none
    passed: bool
    clause: str = ""  # the contract clause of the function this check enforces ("K2")
    message: str = ""  # the first failure it found

    @classmethod
    def from_dict(cls, data: Any) -> CheckResult | None:
        if not isinstance(data, dict):
            return None
        values = read_fields(cls, data)
        if not isinstance(data.get("title"), str):
            values["title"] = values["name"]
        return cls(**values)


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
    checks: list[str] = field(default_factory=list, metadata={"most": 50})  # whose failures were charged here
    note: str = ""  # passed, but its own inputs failed as another clause's mistake (look again later)

    @classmethod
    def from_dict(cls, data: Any) -> ClauseResult | None:
        """None for a clause without a name (nothing to count it under)."""
        if not isinstance(data, dict):
            return None
        values = read_fields(cls, data)
        return cls(**values) if values["clause"] else None


class MisconceptionResult(TypedDict):
    """A catalogued misconception the graders diagnosed, with the hint its student was given."""

    id: str
    hint: str


@dataclass
class CellResult:
    """One test cell ``test_<function>``: its score from the checks, status, misconceptions."""

    grade_id: str
    function: str  # from its grade id when a record has none
    score: float
    max_score: float
    status: CellStatus = field(default=CellStatus.OK, metadata={"unreadable": CellStatus.ERROR})
    clauses: list[ClauseResult] = field(
        default_factory=list,
        metadata=_doc("the function's clauses (Ketentuan yang dinilai): the unit of credit"),
    )
    checks: list[CheckResult] = field(default_factory=list)
    misconceptions: list[MisconceptionResult] = field(
        default_factory=list,
        metadata=_doc(
            "the catalogued misconceptions diagnosed (graders/), each with the hint its student was given"
        ),
    )

    @property
    def lost(self) -> list[ClauseResult]:
        return [c for c in self.clauses if not c.passed]

    @classmethod
    def from_dict(cls, data: Any) -> CellResult | None:
        if not isinstance(data, dict):
            return None
        data = legacy.cell(data)
        values = read_fields(cls, data)
        if not isinstance(data.get("function"), str):
            values["function"] = values["grade_id"].removeprefix("test_")
        values["misconceptions"] = [m for m in values["misconceptions"] if m["id"]]
        return cls(**values)


@dataclass
class GradingRecord:
    """What the graders decided for one notebook of one student."""

    DERIVED: ClassVar[tuple[str, ...]] = ("score", "max_score")  # written beside the fields

    notebook: str
    cells: list[CellResult]
    isolation: str = field(metadata=_doc("how the student's code was isolated"))
    cell_errors: list[dict] = field(
        default_factory=list,
        metadata=_doc("top-level code cells that failed while the graders loaded the code"),
    )
    timed_out_cells: list[int] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list, metadata={"most": MAX_NOTES})
    seconds: float = 0.0
    resources: dict[str, dict] = field(
        default_factory=dict,
        metadata=_doc(
            "per sandboxed run (execute, score): peak_memory, peak_processes, cpu_seconds, hits, limits"
        ),
    )  # run ("execute", "score") -> Limits.record()
    student: str | None = None
    assignment: str | None = None
    version: int = field(default=RECORD_VERSION, metadata={"unreadable": 0})  # as read; written: the current
    graders_version: str = field(
        default="",
        metadata=_doc("hash of the graders (graders/<assignment>/) and the release that graded it", most=200),
    )  # regrade.py
    regrade: dict[str, Any] | None = field(
        default=None,
        metadata=_doc(
            "what changed since the record this one replaced: old and new score, the graders' versions, "
            "and per clause the check, input and old and new verdict"
        ),
    )  # regrade.py

    @property
    def score(self) -> float:
        return round(sum(c.score for c in self.cells), 6)

    @property
    def max_score(self) -> float:
        return round(sum(c.max_score for c in self.cells), 6)

    def cell(self, grade_id: str) -> CellResult | None:
        return next((c for c in self.cells if c.grade_id == grade_id), None)

    @property
    def unisolated(self) -> bool:
        """Graded without bubblewrap (the instructor's opt-in for trusted code): the isolation line says so."""
        return self.isolation.startswith(UNISOLATED)

    # -- JSON ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return to_json(self) | {"version": RECORD_VERSION, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradingRecord:
        """A record from JSON data, keeping only what is well-formed (see the module docstring)."""
        return cls(**read_fields(cls, data))

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

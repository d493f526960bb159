"""The grading record: what the hidden graders decided for one notebook (``<notebook>.grading.json``).

- :mod:`.model` the typed record (``GradingRecord`` and its cells, clauses, checks and notes), read and
  written as JSON;
- :mod:`.schema` its JSON Schema (``docs/grading-record.schema.json``), generated from the classes;
- :mod:`.attention` what in a record is worth an instructor's look.
"""

from .model import (
    RECORD_VERSION,
    Attention,
    CellResult,
    CellStatus,
    CheckResult,
    ClauseResult,
    GradingRecord,
    Note,
    NoteKind,
    atomic_write,
    notebook_attention,
)

__all__ = [
    "RECORD_VERSION",
    "Attention",
    "CellResult",
    "CellStatus",
    "CheckResult",
    "ClauseResult",
    "GradingRecord",
    "Note",
    "NoteKind",
    "atomic_write",
    "notebook_attention",
]

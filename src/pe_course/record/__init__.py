"""The grading record: what the hidden graders decided for one notebook (``<notebook>.grading.json``),
the one object every view reads (the command's summary, the report, the feedback, the regrade).

- :mod:`.model` the typed record: ``GradingRecord`` and its cells, clauses, checks, notes and
  misconceptions (with their hints); :mod:`.codec` its JSON, read from the classes' fields;
  :mod:`.legacy` what older versions wrote;
- :mod:`.schema` its JSON Schema (``docs/grading-record.schema.json``), generated from the classes;
- :mod:`.outcomes` every status, note kind and reason for a look, once, in English and Indonesian;
- :mod:`.attention` what in a record is worth an instructor's look;
- :mod:`.feedback` the Indonesian feedback of a test cell, from its result.
"""

from .attention import Attention, notebook_attention, record_attention
from .model import (
    RECORD_VERSION,
    CellResult,
    CheckResult,
    ClauseResult,
    GradingRecord,
    MisconceptionResult,
    Note,
    atomic_write,
)
from .outcomes import CellStatus, NoteKind

__all__ = [
    "RECORD_VERSION",
    "Attention",
    "CellResult",
    "CellStatus",
    "CheckResult",
    "ClauseResult",
    "GradingRecord",
    "MisconceptionResult",
    "Note",
    "NoteKind",
    "atomic_write",
    "record_attention",
    "notebook_attention",
]

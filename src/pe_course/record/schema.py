"""The JSON Schema of a ``.grading.json`` record (``docs/grading-record.schema.json``), generated from
the classes of :mod:`pe_course.record`: ``python -m pe_course.record_schema`` regenerates it, and
``tests/test_record.py`` checks the committed file against the classes."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from .model import RECORD_VERSION, CellStatus, CheckResult, ClauseResult, NoteKind, atomic_write


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``.grading.json`` record of the current version."""
    check = _object_schema(CheckResult)
    clause = _object_schema(ClauseResult)
    cell = {
        "type": "object",
        "required": [
            "grade_id",
            "function",
            "score",
            "max_score",
            "status",
            "clauses",
            "checks",
            "misconceptions",
        ],
        "properties": {
            "grade_id": {"type": "string"},
            "function": {"type": "string"},
            "score": {"type": "number"},
            "max_score": {"type": "number"},
            "status": {"enum": [s.value for s in CellStatus]},
            "clauses": {
                "type": "array",
                "items": {"$ref": "#/$defs/clause"},
                "description": "the function's clauses (Ketentuan yang dinilai): the unit of credit",
            },
            "checks": {"type": "array", "items": {"$ref": "#/$defs/check"}},
            "misconceptions": {
                "type": "array",
                "items": {"type": "string"},
                "description": "ids of the catalogued misconceptions diagnosed (graders/)",
            },
        },
        "additionalProperties": False,
    }
    note = {
        "type": "object",
        "required": ["kind", "detail"],
        "additionalProperties": False,
        "properties": {"kind": {"enum": [k.value for k in NoteKind]}, "detail": {"type": "string"}},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://pe-course/grading-record.schema.json",
        "title": "pe-course grading record (<notebook>.grading.json)",
        "description": "Written next to each autograded notebook by pe_course (GradingRecord.to_dict).",
        "type": "object",
        "required": [
            "version",
            "student",
            "assignment",
            "notebook",
            "score",
            "max_score",
            "isolation",
            "seconds",
            "notes",
            "cell_errors",
            "timed_out_cells",
            "resources",
            "graders_version",
            "regrade",
            "cells",
        ],
        "properties": {
            "version": {"const": RECORD_VERSION},
            "student": {"type": ["string", "null"]},
            "assignment": {"type": ["string", "null"]},
            "notebook": {"type": "string"},
            "score": {"type": "number"},
            "max_score": {"type": "number"},
            "isolation": {"type": "string", "description": "how the student's code was isolated"},
            "seconds": {"type": "number"},
            "notes": {"type": "array", "items": {"$ref": "#/$defs/note"}},
            "cell_errors": {
                "type": "array",
                "items": {"type": "object"},
                "description": "top-level code cells that failed while the graders loaded the code",
            },
            "timed_out_cells": {"type": "array", "items": {"type": "integer"}},
            "resources": {
                "type": "object",
                "additionalProperties": {"type": "object"},
                "description": "per sandboxed run (execute, score): peak_memory, peak_processes, "
                "cpu_seconds, hits, limits",
            },
            "graders_version": {
                "type": "string",
                "description": "hash of the graders (graders/<assignment>/) and the release that graded it",
            },
            "regrade": {
                "type": ["object", "null"],
                "description": "what changed since the record this one replaced: old and new score, the "
                "graders' versions, and per clause the check, input and old and new verdict",
            },
            "cells": {"type": "array", "items": {"$ref": "#/$defs/cell"}},
        },
        "additionalProperties": False,
        "$defs": {"clause": clause, "check": check, "cell": cell, "note": note},
    }


_JSON_TYPES = {str: "string", bool: "boolean", float: "number", int: "integer"}


def _object_schema(cls) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties, required = {}, []
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        if isinstance(kind, types.UnionType):
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
        if typing.get_origin(kind) is list:
            properties[f.name] = {"type": "array", "items": {"type": _JSON_TYPES[typing.get_args(kind)[0]]}}
        else:
            properties[f.name] = {"type": _JSON_TYPES[kind]}
        required.append(f.name)
    return {"type": "object", "required": required, "properties": properties, "additionalProperties": False}


SCHEMA_PATH = Path("docs") / "grading-record.schema.json"


if __name__ == "__main__":  # python -m pe_course.record_schema: regenerate docs/grading-record.schema.json
    from ..course import find_root

    target = find_root() / SCHEMA_PATH
    atomic_write(target, json.dumps(json_schema(), indent=2) + "\n")
    print(f"wrote {target}")

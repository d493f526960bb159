"""The JSON Schema of a ``.grading.json`` record (``docs/grading-record.schema.json``), generated from
the classes of :mod:`.model` (their fields, types and ``doc`` metadata: the same description of the
shape that :mod:`.codec` writes and reads). ``python -m pe_course.record.schema`` regenerates it, and
``tests/record/test_record.py`` checks the committed file against the classes."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from enum import Enum
from pathlib import Path
from typing import Any, is_typeddict

from .codec import derived, field_types, optional
from .model import RECORD_VERSION, GradingRecord, atomic_write

SCHEMA_PATH = Path("docs") / "grading-record.schema.json"
_JSON_TYPES = {str: "string", bool: "boolean", float: "number", int: "integer", dict: "object"}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``.grading.json`` record of the current version."""
    defs: dict[str, Any] = {}
    record = _object(GradingRecord, defs)
    record["properties"]["version"] = {"const": RECORD_VERSION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://pe-course/grading-record.schema.json",
        "title": "pe-course grading record (<notebook>.grading.json)",
        "description": "Written next to each autograded notebook by pe_course (GradingRecord.to_dict).",
        **record,
        "$defs": defs,
    }


def _object(cls: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """A dataclass (its fields, then what it derives) or a TypedDict as a JSON object."""
    if is_typeddict(cls):
        kinds = typing.get_type_hints(cls)
        docs: dict[str, str] = {}
    else:
        fields = field_types(cls)
        kinds = {f.name: kind for f, kind in fields} | derived(cls)
        docs = {f.name: f.metadata["doc"] for f, _ in fields if "doc" in f.metadata}
    properties = {}
    for name, kind in kinds.items():
        properties[name] = _value(kind, defs) | ({"description": docs[name]} if name in docs else {})
    return {
        "type": "object",
        "required": list(kinds),
        "properties": properties,
        "additionalProperties": False,
    }


def _value(kind: Any, defs: dict[str, Any]) -> dict[str, Any]:
    inner = optional(kind)
    if inner is not None:
        return {"type": [_JSON_TYPES[typing.get_origin(inner) or inner], "null"]}
    origin = typing.get_origin(kind)
    if origin is list:
        return {"type": "array", "items": _value(typing.get_args(kind)[0], defs)}
    if origin is dict:
        values = typing.get_args(kind)[1]
        return {"type": "object"} | ({} if values is Any else {"additionalProperties": _value(values, defs)})
    if isinstance(kind, type) and issubclass(kind, Enum):
        return {"enum": [k.value for k in kind]}
    if dataclasses.is_dataclass(kind) or is_typeddict(kind):
        name = _def_name(kind)
        if name not in defs:
            defs[name] = {}  # taken before its fields are read
            defs[name] = _object(kind, defs)
        return {"$ref": f"#/$defs/{name}"}
    return {"type": _JSON_TYPES[kind]}


def _def_name(cls: type) -> str:
    """``CheckResult`` -> ``check``, ``Note`` -> ``note``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", cls.__name__.removesuffix("Result")).lower()


if (
    __name__ == "__main__"
):  # python -m pe_course.record.schema, in the project: regenerate docs/grading-record.schema.json
    target = Path.cwd() / SCHEMA_PATH
    atomic_write(target, json.dumps(json_schema(), indent=2) + "\n")
    print(f"wrote {target}")

"""The record's classes (:mod:`.model`) to JSON and back, by their fields: the record's shape is written
once, as the dataclasses' fields and types, and read from them here and by :mod:`.schema`.

A record is read back as untrusted data (a student cannot write one, but a damaged or hand-edited file must
not stop a report): a value of the wrong type is read as the field's default, or as its ``unreadable``
metadata where a damaged value means something else (a cell whose status cannot be read is an error), or as
the type's zero; a list keeps its well-formed items, at most ``most`` of them (a text at most ``most``
characters). A class with a ``from_dict`` is read by it (what an older version wrote, what must not be
empty); everything else is read here.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from enum import Enum
from typing import Any, is_typeddict

MISSING: Any = object()  # no well-formed value


def field_types(cls: Any) -> list[tuple[dataclasses.Field, Any]]:
    """A dataclass's fields, each with its type."""
    hints = typing.get_type_hints(cls)
    return [(f, hints[f.name]) for f in dataclasses.fields(cls)]


def derived(cls: Any) -> dict[str, Any]:
    """The properties a class writes beside its fields (``DERIVED``), each with its type."""
    return {
        name: typing.get_type_hints(getattr(cls, name).fget)["return"] for name in getattr(cls, "DERIVED", ())
    }


def optional(kind: Any) -> Any:
    """``X`` of ``X | None``; None for any other type."""
    if typing.get_origin(kind) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(kind)) == 2:
            return args[0]
    return None


def to_json(value: Any) -> Any:
    """An object of the record as JSON data: its fields, then its derived properties."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return data | {name: to_json(getattr(value, name)) for name in getattr(value, "DERIVED", ())}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


def read_fields(cls: Any, data: dict) -> dict[str, Any]:
    """The well-formed value of each of a dataclass's fields in ``data`` (see the module docstring)."""
    values = {}
    for f, kind in field_types(cls):
        value = read(kind, data.get(f.name, MISSING), f.metadata.get("most"))
        if value is MISSING:
            value = f.metadata.get("unreadable", MISSING)
        if value is MISSING:
            if f.default is not dataclasses.MISSING:
                value = f.default
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            else:
                value = _zero(kind)
        values[f.name] = value
    return values


def read(kind: Any, value: Any, most: int | None = None) -> Any:
    """``value`` as a well-formed ``kind``, or :data:`MISSING`."""
    if value is MISSING:
        return MISSING
    inner = optional(kind)
    if inner is not None:
        return None if value is None else read(inner, value, most)
    origin = typing.get_origin(kind)
    if origin is list:
        if not isinstance(value, list):
            return MISSING
        (item,) = typing.get_args(kind)
        items = [v for v in (read(item, v) for v in value) if v is not MISSING]
        return items[:most] if most else items
    if origin is dict or kind is dict or is_typeddict(kind):
        return (
            _typed_dict(kind, value)
            if is_typeddict(kind)
            else (value if isinstance(value, dict) else MISSING)
        )
    if dataclasses.is_dataclass(kind):
        cls: Any = kind
        reader = getattr(cls, "from_dict", None)
        if reader is not None:
            found = reader(value)
        else:
            found = cls(**read_fields(cls, value)) if isinstance(value, dict) else None
        return MISSING if found is None else found
    if isinstance(kind, type) and issubclass(kind, Enum):
        try:
            return kind(value)
        except ValueError:
            return MISSING
    return _scalar(kind, value, most)


def _scalar(kind: Any, value: Any, most: int | None) -> Any:
    if kind is Any:
        return value
    if kind is bool:
        return value if isinstance(value, bool) else MISSING
    if isinstance(value, bool):
        return MISSING
    if kind is int:
        return value if isinstance(value, int) else MISSING
    if kind is float:
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else MISSING
    if kind is str:
        return (value[:most] if most else value) if isinstance(value, str) else MISSING
    raise TypeError(f"a record field of type {kind!r} cannot be read")


def _typed_dict(kind: Any, value: Any) -> Any:
    if not isinstance(value, dict):
        return MISSING
    found = {}
    for key, item in typing.get_type_hints(kind).items():
        read_value = read(item, value.get(key, MISSING))
        found[key] = _zero(item) if read_value is MISSING else read_value
    return found


def _zero(kind: Any) -> Any:
    if optional(kind) is not None:
        return None
    origin = typing.get_origin(kind) or kind
    return {str: "", float: 0.0, int: 0, bool: False, list: [], dict: {}}[origin]

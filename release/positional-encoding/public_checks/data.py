"""Arguments and results written as JSON (the public cases beside the notebooks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .messages import Outcome


# --------------------------------------------------------------------------------------------
# Data files: arguments and results written as JSON
# --------------------------------------------------------------------------------------------
def to_data(value: Any) -> Any:
    """A plain value as JSON data (arrays as ``{"array": ..., "dtype": ...}``, tuples as ``{"tuple": ...}``)."""
    if isinstance(value, np.ndarray):
        data = {"array": value.tolist(), "dtype": value.dtype.name}
        if value.size == 0:
            data["shape"] = list(value.shape)
        return data
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [to_data(v) for v in value]}
    if isinstance(value, list):
        return [to_data(v) for v in value]
    return value


def from_data(data: Any) -> Any:
    if isinstance(data, dict) and "array" in data:
        return np.asarray(data["array"], dtype=data.get("dtype", "float64")).reshape(
            data.get("shape", np.shape(data["array"]))
        )
    if isinstance(data, dict) and "tuple" in data:
        return tuple(from_data(v) for v in data["tuple"])
    if isinstance(data, list):
        return [from_data(v) for v in data]
    return data


def outcome_to_data(outcome: Outcome) -> dict:
    if outcome.kind == "raised":
        return {"raises": outcome.error}
    return {"value": to_data(outcome.value)}


def outcome_from_data(data: Mapping[str, Any]) -> Outcome:
    if "raises" in data:
        return Outcome("raised", error=str(data["raises"]))
    return Outcome("value", value=from_data(data["value"]))

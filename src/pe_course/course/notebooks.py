"""Reading notebooks: which cells are what, and the reference solutions from ``source/``.

The reference is the solution code in the instructor's ``source/`` notebooks — the single source
of truth. :func:`load_reference` runs those cells (trusted code) in the grader process.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat

from ..public_checks import Clause
from ..sandbox.inside.worker import transform_cell
from .clauses import parse_contracts

HIDDEN_MARKER = "### BEGIN HIDDEN TESTS"
SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"  # nbgrader's markers


def nbgrader_meta(cell: Any) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell: Any) -> str | None:
    value = nbgrader_meta(cell).get("grade_id")
    return value if isinstance(value, str) else None


def is_test_cell(cell: Any) -> bool:
    """An autograded test cell: graded code that is not a solution (or one carrying hidden tests)."""
    if cell.get("cell_type") != "code":
        return False
    meta = nbgrader_meta(cell)
    if meta.get("grade") and not meta.get("solution"):
        return True
    return HIDDEN_MARKER in cell.get("source", "")


def is_demo_cell(cell: Any) -> bool:
    """A provided read-only cell that only prints or plots from the student's functions."""
    tags = cell.get("metadata", {}).get("tags", [])
    gid = grade_id(cell) or ""
    return (isinstance(tags, list) and "demo" in tags) or (
        gid.startswith("demo_") and bool(nbgrader_meta(cell).get("locked"))
    )


def worker_cells(nb: Any) -> list[str]:
    """The code the grading worker executes: every code cell except test and demo cells."""
    return [
        cell.get("source", "") if isinstance(cell.get("source", ""), str) else "".join(cell["source"])
        for cell in nb.get("cells", [])
        if cell.get("cell_type") == "code" and not is_test_cell(cell) and not is_demo_cell(cell)
    ]


def test_cell_ids(nb: Any) -> list[str]:
    return [gid for cell in nb.get("cells", []) if is_test_cell(cell) and (gid := grade_id(cell))]


def strip_solution_markers(source: str) -> str:
    """Source of a solution cell with the nbgrader markers removed (the reference code itself)."""
    return "\n".join(
        line for line in source.splitlines() if line.strip() not in (SOLUTION_BEGIN, SOLUTION_END)
    )


def source_notebooks(source_dir: Path) -> list[Path]:
    return sorted(Path(source_dir).glob("*.ipynb"))


class Reference(dict):
    """The reference functions by name, plus each graded function's contract as the notebooks state it
    (``contracts[function][clause id] = Clause(id, text, points)``, see :mod:`pe_course.course.clauses`)."""

    contracts: dict[str, dict[str, Clause]]


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Run the block in ``path`` (contextlib.chdir from Python 3.11 on)."""
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@functools.lru_cache(maxsize=8)
def _load_reference_cached(source_dir: str, stamp: tuple) -> Reference:
    os.environ.setdefault("MPLBACKEND", "Agg")
    functions = Reference()
    functions.contracts = {}
    for path in source_notebooks(Path(source_dir)):
        nb = nbformat.read(path, as_version=4)
        functions.contracts.update(parse_contracts(nb))
        namespace: dict[str, Any] = {"__name__": f"reference_{path.stem}"}
        # in the notebooks' folder, as in JupyterLab: setup cells load the data beside them (pe_tables.npz)
        with working_directory(Path(source_dir)):
            for source in worker_cells(nb):
                code = transform_cell(strip_solution_markers(source))
                if code is not None:
                    exec(compile(code, f"<reference {path.name}>", "exec"), namespace)  # noqa: S102 (instructor code)
        for name, obj in namespace.items():
            if callable(obj) and getattr(obj, "__module__", None) == namespace["__name__"]:
                functions.setdefault(name, obj)
    return functions


def load_reference(source_dir: Path) -> Reference:
    """Functions defined by the source notebooks' setup and solution cells, by name."""
    paths = source_notebooks(Path(source_dir))
    if not paths:
        raise FileNotFoundError(f"no source notebooks in {source_dir}")
    # the notebooks and the data files beside them
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(Path(source_dir).iterdir()) if p.is_file())
    return _load_reference_cached(str(Path(source_dir).resolve()), stamp)

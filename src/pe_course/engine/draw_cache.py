"""The generated inputs of :func:`.drawing.draw`, kept on disk between processes.

Drawing a check's examples with hypothesis is deterministic (derandomized, database-free) but not cheap:
about 2.8 of the 10 CPU-seconds a grading worker spends on its first four-notebook student (the graders'
every strategy drawn once; cProfile, 2026-12-05). Every round starts new workers, every self-validation
and every Dask worker draws again. This module keeps each draw in ``~/.cache/pe-course/draws/`` under a key
that names everything the examples depend on: the source of the package the strategy comes from (the
graders' folder, every file of it) and of this package, the strategy's name in its module, the count, and the versions of hypothesis,
NumPy and Python and the machine's architecture. A changed grader is a new key, never a stale draw.

The files are read back with an unpickler that builds nothing but plain data and NumPy arrays, so a file
planted there can at worst make the draw come out again; anything unreadable is drawn again and
rewritten. ``PE_COURSE_NO_DRAW_CACHE=1`` turns the cache off (``tests/engine/test_draw_cache.py``
compares both ways).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import platform
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..course.versions import tree_digest

FORMAT = 1  # of the files: a new one ignores the old ones
_ALLOWED = frozenset(
    [("numpy", "ndarray"), ("numpy", "dtype"), ("builtins", "complex")]
    + [
        (module, name)
        for module in ("numpy.core.multiarray", "numpy._core.multiarray")
        for name in ("_reconstruct", "scalar")
    ]
)


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pe-course" / "draws"


def path_for(factory: Callable[[], Any], n: int) -> Path | None:
    """Where the ``n`` examples of ``factory`` are kept; None where they are not (the cache is off, or the
    strategy is not an attribute of a package's module: a test's own, one made inside a function)."""
    if os.environ.get("PE_COURSE_NO_DRAW_CACHE"):
        return None
    module_name, name = getattr(factory, "__module__", None) or "", getattr(factory, "__name__", "")
    folders = getattr(sys.modules.get(module_name.partition(".")[0]), "__path__", None)
    if not folders or getattr(sys.modules.get(module_name), name, None) is not factory:
        return None  # named by its module's attribute: no other strategy can have its name
    import hypothesis
    import numpy

    try:
        folder = cache_dir()
        key = "\0".join(
            (
                str(FORMAT),
                tree_digest(
                    ("graders", Path(folders[0]), "*"),  # code, cases and all
                    ("pe_course", Path(__file__).resolve().parents[1], "*.py"),
                ),
                # the name within its package (a suite's package name is made from where it lies)
                f"{module_name.partition('.')[2]}.{name}",
                str(n),
                hypothesis.__version__,
                numpy.__version__,
                platform.python_version(),
                platform.machine(),
            )
        )
    except (OSError, RuntimeError):  # a graders' file gone meanwhile, no home directory: not kept
        return None
    return folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.pickle"


def load(path: Path, n: int) -> tuple | None:
    """The ``n`` examples kept at ``path``, or None (none kept, unreadable, planted, another version)."""
    try:
        examples = _DataOnly(io.BytesIO(path.read_bytes())).load()
    except Exception:  # noqa: BLE001 (whatever is wrong with the file, the examples are drawn again)
        return None
    return examples if isinstance(examples, tuple) and len(examples) == n else None


def store(path: Path, examples: tuple) -> None:
    """Keep ``examples`` at ``path`` (written whole or not at all; nothing is said when it cannot be)."""
    try:
        data = pickle.dumps(examples, protocol=4)
        _DataOnly(io.BytesIO(data)).load()  # only what load() will take back
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except Exception:  # noqa: BLE001 (examples that are not plain data, an unwritable home: not kept)
        return
    try:
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=".draw-")
    except OSError:  # a folder this user cannot write to: not kept, and grading goes on
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    except OSError:
        Path(partial).unlink(missing_ok=True)


class _DataOnly(pickle.Unpickler):
    """Plain data (numbers, strings, tuples, lists, dicts, sets) and NumPy arrays and scalars, nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"not kept in a draw: {module}.{name}")

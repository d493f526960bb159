"""The assignment's data files: what sits beside the notebooks (e.g. ``pe_tables.npz``, see
:mod:`pe_course.build.pe_tables`) and goes into the sandbox's scratch directory for every run of a
student's code, so it must stay small and be plain data (NumPy archives, loaded without pickle).

``generate_assignment`` copies them from ``source/`` into ``release/``; ``pe-course release`` refuses
anything else (:mod:`pe_course.build.release`); the public checks' folder beside them is not data.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

PUBLIC_DIR = (
    "public_checks"  # the public checks' folder beside the notebooks (pe_course.build.public_files): not data
)
DATA_SUFFIXES = (".npz",)
MAX_DATA_BYTES = 4 * 1024 * 1024  # one data file
MAX_DATA_FILES = 8


class DataFileError(RuntimeError):
    """A file beside the notebooks that may not go to the students or into the sandbox."""


def data_files(folder: Path) -> dict[str, bytes]:
    """The assignment's data files in ``folder`` (every entry but the notebooks and hidden names), by name.

    Raises :class:`DataFileError`, saying which file and why, for anything that is not a small regular
    file (no symlink, no folder) with a suffix of ``DATA_SUFFIXES``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return {}
    names = sorted(
        n
        for n in os.listdir(folder)
        if not n.startswith(".")
        and not n.endswith(".ipynb")
        and n != PUBLIC_DIR  # the public checks: not data
    )
    if len(names) > MAX_DATA_FILES:
        raise DataFileError(
            f"{folder}: {len(names)} data files beside the notebooks (at most {MAX_DATA_FILES})"
        )
    found = {}
    for name in names:
        path = folder / name
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise DataFileError(f"{path}: not a regular file (a folder or symlink cannot be shipped)")
        if not name.endswith(DATA_SUFFIXES):
            raise DataFileError(
                f"{path}: only data files ({', '.join(DATA_SUFFIXES)}) may sit beside the notebooks"
            )
        if info.st_size > MAX_DATA_BYTES:
            raise DataFileError(
                f"{path}: {info.st_size / 2**20:.1f} MiB, over the limit of {MAX_DATA_BYTES / 2**20:g} MiB for "
                "a data file (it is copied into the sandbox for every student's run)"
            )
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            found[name] = f.read(MAX_DATA_BYTES + 1)
        if len(found[name]) > MAX_DATA_BYTES:
            raise DataFileError(f"{path}: grew over {MAX_DATA_BYTES / 2**20:g} MiB while being read")
    return found


def assignment_data_files(config: Any, assignment: str) -> dict[str, bytes]:
    """The data files of ``release/<assignment>/`` as nbgrader's configuration places it."""
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(config=config)
    return data_files(Path(coursedir.format_path(coursedir.release_directory, ".", assignment)))


def sandbox_data_files(config: Any, assignment: str, log: Any) -> dict[str, bytes]:
    """:func:`assignment_data_files` for a sandboxed run; on a file that may not go there, says why in
    the log and gives none (the run goes on: what needs the file then fails there, visibly)."""
    try:
        return assignment_data_files(config, assignment)
    except (DataFileError, OSError) as exc:
        log.error("The assignment's data files are not put into the sandbox: %s", exc)
        return {}

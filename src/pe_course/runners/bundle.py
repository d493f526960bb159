"""What travels to a Dask worker: the course bundle once per run, each student's submission per task,
and the result back — gzip'd tars of regular files only, unpacked without trusting any path."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

from ..course import Course


def course_bundle(course: Course, template_db: Path) -> bytes:
    """Everything a worker needs besides the submissions, as one tar (deterministic for a digest):
    ``nbgrader_config.py``, the assignment's ``source/`` and ``release/``, its graders
    (:attr:`Course.graders`, at the same place relative to the root) and the template gradebook
    holding the assignment's structure."""
    members = [("nbgrader_config.py", course.root / "nbgrader_config.py"), ("template.db", template_db)]
    graders = course.graders.relative_to(course.root)
    for rel in (Path("source") / course.assignment, Path("release") / course.assignment, graders):
        folder = course.root / rel
        members += [
            (str(p.relative_to(course.root)), p)
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not {"__pycache__", ".hypothesis", ".ipynb_checkpoints"} & set(p.parts)
        ]
    return tar(members)


def submission_archive(course: Course, student: str) -> bytes:
    folder = course.submitted / student / course.assignment
    return tar([(str(p.relative_to(folder)), p) for p in sorted(folder.rglob("*")) if p.is_file()])


def tar(members: list[tuple[str, Path]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as archive:
        for name, path in members:
            info = archive.gettarinfo(str(path), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as f:
                archive.addfile(info, f)
    return buffer.getvalue()


def untar(data: bytes, dest: Path) -> None:
    """Regular files only, inside ``dest`` (the archives are ours, but a path is never trusted)."""
    dest = dest.resolve()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            target = (dest / member.name).resolve()
            if not member.isfile() or dest not in target.parents:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = archive.extractfile(member)
            if source is None:
                continue
            with source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
            os.utime(target, (member.mtime, member.mtime))

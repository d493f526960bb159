"""What travels to a Dask worker: the course bundle once per run, each student's submission per task,
and the result back — gzip'd tars of regular files only, unpacked without trusting any path."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from collections.abc import Sequence
from pathlib import Path

from ..course import GRADERS_DIR, Course, graders_path


def course_bundle(course: Course, template_db: Path) -> bytes:
    """Everything a worker needs besides the submissions, as one tar (deterministic for a digest):
    ``nbgrader_config.py``, the assignment's ``source/`` and ``release/``, its graders
    (:attr:`Course.graders`, at the same place relative to the root) and the template gradebook
    holding the assignment's structure. Graders kept outside the course directory (an absolute
    ``c.ScoreWithGraders.graders_dir``) travel as ``graders/<assignment>/``, and the bundled config
    says so: the worker has no such folder."""
    root = course.root.resolve()
    config: Path | bytes = course.root / "nbgrader_config.py"
    graders = course.graders.resolve()
    if graders.is_relative_to(root):
        graders_at = graders.relative_to(root)
    else:
        graders_at = graders_path(Path(), GRADERS_DIR, course.assignment)
        config = (
            course.root.joinpath("nbgrader_config.py").read_bytes()
            + (
                "\n# pe-course's bundle: the graders travel inside it\n"
                f"c.ScoreWithGraders.graders_dir = {GRADERS_DIR!r}\n"
            ).encode()
        )
    members: list[tuple[str, Path | bytes]] = [("nbgrader_config.py", config), ("template.db", template_db)]
    folders = [
        (Path(name) / course.assignment, root / name / course.assignment) for name in ("source", "release")
    ]
    for at, folder in [*folders, (graders_at, graders)]:
        members += [
            (str(at / p.relative_to(folder)), p)
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not {"__pycache__", ".hypothesis", ".ipynb_checkpoints"} & set(p.parts)
        ]
    return tar(members)


def submission_archive(course: Course, student: str) -> bytes:
    folder = course.submitted / student / course.assignment
    return tar([(str(p.relative_to(folder)), p) for p in sorted(folder.rglob("*")) if p.is_file()])


def tar(members: Sequence[tuple[str, Path | bytes]]) -> bytes:
    """Regular files by name: a path's file, or the bytes given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as archive:
        for name, content in members:
            if isinstance(content, bytes):
                info = tarfile.TarInfo(name)
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
                continue
            info = archive.gettarinfo(str(content), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(content, "rb") as f:
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

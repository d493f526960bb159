"""The resource groups of graders that were killed outright (SIGKILL, a crash, the machine's OOM killer):
found wherever this user's graders made them, their processes ended, the groups removed.

A grader makes its groups where it runs itself (:func:`.groups.mechanism`): as root on cgroup v1 in its own
group, which differs between login sessions (on cgroup v2 in the nearest group, itself or above, that hands
memory and pids to its children; in a subtree ``setup-groups`` delegated in ``pe-course/<user>``: usually
the same for all of a user's graders). So one killed in one session leaves its groups where a grader in
another session makes none. Before its first group, every grader notes the place in ``<temporary
directory>/pe-course-groups-<uid>/`` (:func:`record_place`); the next grader looks in every place noted
there (:func:`places`) and drops the notes of places gone (all of them after a reboot, which ends every
group). A running grader's groups stay: its pid is in their names (:func:`.teardown.maker_is_gone`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Protocol

from . import teardown
from .groupfs import end_group

RECORD = "pe-course-groups-"  # <temporary directory>/pe-course-groups-<uid>/
CGROUPS = Path("/sys/fs/cgroup")  # where every hierarchy groups.mechanism() uses is mounted
STALE_AFTER = 60.0  # seconds: a group is joined milliseconds after it is made


class Where(Protocol):
    """A place groups are made in (a :class:`.groups.Mechanism` is one)."""

    @property
    def version(self) -> int: ...

    @property
    def parents(self) -> dict[str, Path]: ...


class Place(NamedTuple):
    """Where groups are made: the cgroup version, and controller (v1) or "unified" (v2) -> directory."""

    version: int
    parents: dict[str, Path]


def _record_dir(tmp: str | None = None) -> Path | None:
    """This user's record of places; None where the name is not this user's own private directory (taken
    by another user in a shared /tmp) or cannot be made."""
    path = Path(tmp or tempfile.gettempdir()) / f"{RECORD}{os.geteuid()}"
    try:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        info = path.lstat()
    except OSError:
        return None
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022
    return path if mine else None


def record_place(place: Where) -> None:
    """Note where this grader makes its groups, before it makes one."""
    text = json.dumps({"version": place.version, "parents": {k: str(p) for k, p in place.parents.items()}})
    folder = _record_dir()
    if folder is None:
        return
    target = folder / hashlib.sha256(text.encode()).hexdigest()[:16]
    with contextlib.suppress(OSError):
        if not target.exists():
            part = folder / f".{target.name}.{os.getpid()}"
            part.write_text(text)
            part.replace(target)


def places(own: Where | None, tmp: str | None = None) -> list[Place]:
    """Where this user's graders may have left groups: ``own`` (this process's place) and every place noted
    in ``tmp`` that still exists in the control-group file system. The notes of places gone (such as the
    group of a session that ended) are dropped, and so is a note of a folder elsewhere: the sweep reads
    pids from the ``cgroup.procs`` files it finds and kills them, which only the kernel may write."""
    found = [Place(own.version, own.parents)] if own is not None else []
    folder = _record_dir(tmp)
    for record in sorted(folder.iterdir()) if folder is not None else []:
        if record.name.startswith("."):  # a note being written, by the pid its name ends with
            writer = record.suffix.lstrip(".")
            if writer.isdigit() and teardown.process_is_gone(int(writer)):
                record.unlink(missing_ok=True)  # its writer was killed before it could rename it
            continue
        try:
            data = json.loads(record.read_text())
            place = Place(int(data["version"]), {k: Path(v) for k, v in data["parents"].items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # not a note
        if not all(parent.is_dir() and _in_cgroupfs(parent) for parent in place.parents.values()):
            record.unlink(missing_ok=True)
        elif all(place.parents != known.parents for known in found):
            found.append(place)
    return found


def _in_cgroupfs(path: Path) -> bool:
    return path.resolve().is_relative_to(CGROUPS)


def remove_left_behind(own: Where | None, tmp: str | None = None) -> int:
    """In every place of :func:`places`: end the processes of the groups whose maker has ended and remove
    those groups, with the empty old ones (:func:`sweep_stale`); how many."""
    removed = 0
    for place in places(own, tmp):
        removed += sweep_stale(place)
        names = set()
        for parent in place.parents.values():
            for path in parent.glob(f"{teardown.PREFIX}*"):
                with contextlib.suppress(OSError):
                    if path.stat().st_uid == os.geteuid() and teardown.maker_is_gone(path.name):
                        names.add(path.name)
        for name in names:
            end_group(place.version, {key: parent / name for key, parent in place.parents.items()})
        removed += len(names)
    return removed


def sweep_stale(place: Where | None, older_than: float = STALE_AFTER) -> int:
    """Remove empty sandbox groups left by a grader that was killed outright (``kill -9``): they
    hold no process and are older than any group still being set up. How many were removed."""
    if place is None:
        return 0
    removed, now = 0, time.time()
    for parent in place.parents.values():
        for path in parent.glob(f"{teardown.PREFIX}*"):
            try:
                if (
                    now - path.stat().st_mtime >= older_than
                    and not (path / "cgroup.procs").read_text().strip()
                ):
                    path.rmdir()
                    removed += 1
            except OSError:
                continue  # in use, or removed meanwhile
    return removed


def remove_left_by(pid: int, place: Where | None) -> int:
    """Kill the processes of the groups the process ``pid`` made in ``place`` (it was killed outright, so it
    could not) and remove those groups; how many."""
    if place is None:
        return 0
    names = {p.name for parent in place.parents.values() for p in parent.glob(f"{teardown.PREFIX}{pid}-*")}
    for name in names:
        end_group(place.version, {key: parent / name for key, parent in place.parents.items()})
    return len(names)

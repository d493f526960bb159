"""A sandboxed run's scratch directory: made, written and read without following what the run
planted in it, and removed with everything in it.

The sandboxed program can create, replace and symlink names in its scratch directory at any time, so
the (possibly root) grader never opens an existing name there and never follows a link it finds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from . import groups, leftovers, teardown


def new_scratch() -> Path:
    """A new private directory, registered for :func:`teardown.end_all` from the moment it exists."""
    with teardown.creating():
        path = Path(tempfile.mkdtemp(prefix=teardown.name_prefix()))
        teardown.add(path, lambda: remove_tree(path), teardown.SCRATCH)
    return path


def sweep_left_behind(tmp: str | None = None) -> int:
    """Remove what graders that were killed outright (SIGKILL, a crash, the machine's OOM killer) left on
    this machine: the groups of every maker that has ended, with any process still in them, wherever this
    user's graders made them (another login session's group included: :mod:`.leftovers`), the
    empty groups older than any being set up, and this user's scratch directories whose maker has ended.
    What a running grader made is never touched: its pid is in every name. How many scratch directories
    and groups."""
    removed = leftovers.remove_left_behind(groups.mechanism(), tmp)
    for path in Path(tmp or tempfile.gettempdir()).glob(f"{teardown.PREFIX}*"):
        with contextlib.suppress(OSError):
            info = path.lstat()
            if (
                info.st_uid == os.geteuid()
                and stat.S_ISDIR(info.st_mode)
                and teardown.maker_is_gone(path.name)
            ):
                remove_tree(path)
                removed += 1
    return removed


def remove_scratch(path: Path) -> None:
    """Remove a directory made by :func:`new_scratch`, with everything in it."""
    remove_tree(path)
    teardown.removed(path)


def write_file(scratch: Path, name: str, data: bytes, mode: int = 0o644) -> None:
    """Create ``scratch/name`` for the sandboxed program without following anything it planted.

    The old entry is removed and the file is created with O_EXCL | O_NOFOLLOW (with permissions
    ``mode``, e.g. 0o444 for data the student's code only reads).
    """
    path = scratch / name
    if os.path.lexists(path):
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        os.fchmod(f.fileno(), mode)  # not subject to the umask


def read_file(scratch: Path, name: str, max_bytes: int) -> bytes | None:
    """The content of ``scratch/name`` if it is a regular file (not a symlink) of at most ``max_bytes``."""
    try:
        fd = os.open(scratch / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        return f.read(max_bytes + 1)[:max_bytes]


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything under it, whatever permissions the run left (links not followed).

    Only what is inside ``path`` is ever made writable: a tree already gone (removed by a stop signal's
    teardown first) is left at that, and the folder holding ``path`` (the shared /tmp) is never touched."""
    root = os.path.abspath(path)

    def onerror(func, p, exc_info):
        if isinstance(exc_info[1], FileNotFoundError):
            return  # removed meanwhile: nothing to do
        # chmod follows symlinks: never touch one the sandboxed program planted
        with contextlib.suppress(OSError):
            for target in (os.path.dirname(p), p):
                inside = target == root or target.startswith(root + os.sep)
                if inside and not os.path.islink(target):
                    os.chmod(target, 0o700)
            func(p)

    shutil.rmtree(path, onerror=onerror)
    if path.exists():  # pragma: no cover - last resort
        subprocess.run(["rm", "-rf", str(path)], check=False)

"""A control group's files, as :class:`.groups.ResourceGroup` reads and writes them: its figures, its
processes killed however they detached, its directories removed; and the size check of a run's scratch
directory that the group's monitor makes. cgroup v1 and v2 alike (``version``)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def read_int(path: Path, default: int = 0) -> int:
    try:
        text = path.read_text().strip()
    except OSError:
        return default
    return default if text == "max" else int(text or default)


def read_keyed(path: Path) -> dict[str, int]:
    out = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    return out


def end_group(version: int, dirs: dict[str, Path]) -> None:
    """Kill every process of a group and remove its directories. A process that joins between the kill and
    the removal (a fork on its way into the sandbox when a stop signal came) keeps a directory busy: it is
    killed in turn, until the directories are gone (a process that would join later finds none)."""
    deadline = time.monotonic() + 5  # the last processes may also take a moment to be reaped
    while True:
        kill_group(version, dirs)
        busy = False
        for path in dirs.values():
            try:
                path.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                busy = True
        if not busy or time.monotonic() > deadline:
            return
        time.sleep(0.02)


def group_pids(version: int, dirs: dict[str, Path]) -> list[int]:
    key = "unified" if version == 2 else "pids"
    with contextlib.suppress(OSError):
        return [int(p) for p in (dirs[key] / "cgroup.procs").read_text().split()]
    return []


def kill_group(version: int, dirs: dict[str, Path]) -> None:
    """Kill every process of a group, however it detached itself (frozen first in v1, then thawed:
    frozen processes die once thawed)."""
    if version == 2:
        with contextlib.suppress(OSError):
            (dirs["unified"] / "cgroup.kill").write_text("1")
    freezer = dirs.get("freezer")
    if freezer is not None:
        with contextlib.suppress(OSError):
            (freezer / "freezer.state").write_text("FROZEN")
    try:
        for _ in range(50):
            pids = group_pids(version, dirs)
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if freezer is not None:
                with contextlib.suppress(OSError):
                    (freezer / "freezer.state").write_text("THAWED")
            time.sleep(0.02)
    finally:  # never left frozen: a process joining later would stop there, unkillable, its group unremovable
        if freezer is not None:
            with contextlib.suppress(OSError):
                (freezer / "freezer.state").write_text("THAWED")


def too_big(scratch: Path, max_files: int, max_bytes: int) -> bool:
    """More than ``max_files`` entries or ``max_bytes`` bytes under ``scratch`` (stops counting early)."""
    files, size, stack = 0, 0, [scratch]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            files += 1
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    size += entry.stat(follow_symlinks=False).st_size
            if files > max_files or size > max_bytes:
                return True
    return False

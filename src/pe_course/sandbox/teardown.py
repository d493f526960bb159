"""Every sandbox this process holds, so that a stop ends them all wherever the code happens to be.

A sandboxed run owns three things outside this process: a scratch directory (``/tmp/pe-sandbox-*``),
a resource group (a control group per run) and its processes. Each is entered here the moment it is
made (:func:`creating` holds a stop signal back until it is) and leaves when it has been removed, so
at any instant this registry names exactly what would be left behind.

A local grading worker is stopped with SIGTERM. Unwinding the stack from wherever the signal lands
leaves whatever is being made or removed at that moment (a directory made but not yet entered in a
``try``, a teardown cut in half), so instead :func:`stop_on_signal` makes the signal end everything
registered here (:func:`end_all`) and leave the process at once. :func:`end_all` only kills and
removes, never waits on a lock: it may run in the middle of any other code of the main thread.

:func:`leftovers_of` finds what a process that was killed outright (SIGKILL) could not remove: the
scratch directories and groups carry the pid of the process that made them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..interruption import SignalHold

PREFIX = "pe-sandbox-"  # scratch directories and resource groups: pe-sandbox-<pid>-<random>


# The order end_all() goes in: processes are killed before their groups are removed, and both before
# the scratch directories (which a live process could still write to).
PROCESS, GROUP, SCRATCH = 0, 1, 2


class _Live:
    """What exists now, with how to end it (dicts: adding and removing are single, atomic operations)."""

    def __init__(self) -> None:
        self.ends: tuple[dict[Any, Callable[[], None]], ...] = ({}, {}, {})  # by PROCESS, GROUP, SCRATCH


_LIVE = _Live()


def name_prefix() -> str:
    """The name every scratch directory and group made by this process starts with."""
    return f"{PREFIX}{os.getpid()}-"


def creating() -> SignalHold:
    """Make something and :func:`add` it inside this block: a stop signal waits until the block ends."""
    return _HOLD


def add(thing: Any, end: Callable[[], None], kind: int) -> None:
    """``thing`` exists now; ``end()`` ends it (kills or removes; idempotent, takes no lock)."""
    _LIVE.ends[kind][thing] = end


def removed(thing: Any) -> None:
    """``thing`` is gone: nothing left to end."""
    for ends in _LIVE.ends:
        ends.pop(thing, None)


def live() -> tuple[int, int, int]:
    """(processes, groups, scratch directories) registered now."""
    return len(_LIVE.ends[PROCESS]), len(_LIVE.ends[GROUP]), len(_LIVE.ends[SCRATCH])


def end_all() -> None:
    """Kill every registered process, remove every group and scratch directory.

    Safe wherever the main thread was interrupted: the ends signal, read ``/proc`` and remove files,
    and take no lock that the interrupted code could hold."""
    for ends in _LIVE.ends:
        for thing, end in list(ends.items()):
            with contextlib.suppress(Exception):
                end()
            ends.pop(thing, None)


def stop_on_signal(*signums: int) -> None:
    """From now on, the first of ``signums`` ends every sandbox of this process and exits with
    128 + the signal; later ones are ignored. Call from the main thread (a local grading worker)."""
    for signum in signums:
        signal.signal(signum, _on_signal)


def _on_signal(signum, frame) -> None:
    for other in (signal.SIGTERM, signal.SIGINT):
        signal.signal(other, signal.SIG_IGN)
    if not _HOLD.keep(signum):  # else creating() ends everything once the new thing is registered
        _stop(signum)


def _stop(signum: int) -> None:
    end_all()
    os._exit(128 + signum)


_HOLD = SignalHold(_stop)


def leftovers_of(pid: int, tmp: str | None = None) -> list[Path]:
    """The scratch directories that the process ``pid`` made in ``tmp`` (default: the temporary
    directory) and did not remove."""
    return sorted(Path(tmp or tempfile.gettempdir()).glob(f"{PREFIX}{pid}-*"))


def maker_of(name: str) -> int | None:
    """The pid in a ``pe-sandbox-<pid>-…`` name (None for another name)."""
    pid = name.removeprefix(PREFIX).partition("-")[0]
    return int(pid) if name.startswith(PREFIX) and pid.isdigit() else None


def maker_is_gone(name: str) -> bool:
    """Whether the process that made ``pe-sandbox-<pid>-…`` has ended (:func:`process_is_gone`)."""
    pid = maker_of(name)
    return pid is not None and process_is_gone(pid)


def process_is_gone(pid: int) -> bool:
    """Whether the process ``pid`` has ended: no such process, or a zombie not reaped yet (a process still
    running, or another user's that this one may not signal, has not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    try:  # "pid (comm) S …": the state follows the last ")"
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True  # ended between the two looks


atexit.register(end_all)  # a process that ends normally keeps nothing either

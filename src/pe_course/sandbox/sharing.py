"""Runs without a resource group: one at a time, so that no submission decides another's grade.

Without a control group per run (the instructor's explicit opt-in, ``--without-resource-groups``; see
:mod:`.policy`), the only process limit is ``RLIMIT_NPROC``, which the kernel counts over *every*
process and thread of the grading user (in bubblewrap's user namespace too: its count is charged to
the user who made the namespace). Graded side by side, a submission that forks until the limit makes
the honest submission beside it fail to start its kernel, and it loses points (measured in issue 32:
11 of 27). So, without a group:

- :func:`exclusive` lets one run at a time use student code on this machine, per user (a lock file in
  the host's temporary directory, which sandboxes cannot see; several grading processes and Dask
  workers of the same user queue on it), and after each run waits until the processes it started are
  gone before the next one starts;
- :func:`nproc` gives each run's processes a limit counted from the user's processes at its start, so
  that what the instructor already runs does not come out of the student's allowance.

With a group (the default) neither is needed: each run's processes are bounded by its own group, and
``RLIMIT_NPROC`` is left as the grader has it (a per-user limit shared by runs is what made one run's
forks fail another's).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

SETTLE_TIMEOUT = 10.0  # seconds to wait for a run's killed processes to be gone
_lock = threading.RLock()
_depth = 0
_fd: int | None = None


def tasks_of(uid: int) -> int:
    """Processes and threads whose real user id is ``uid`` (what ``RLIMIT_NPROC`` counts)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line
            )
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
    return count


def nproc(processes: int, grouped: bool) -> int | None:
    """The ``RLIMIT_NPROC`` of a run's processes: None (left as it is) with a group; else ``processes``
    beyond what the grading user runs now (root: ``processes``, which does not bind root anyway)."""
    if grouped:
        return None
    if os.geteuid() == 0:
        return processes
    return processes + tasks_of(os.getuid())


def lock_path() -> Path:
    return Path(tempfile.gettempdir()) / f"pe-course-ungrouped-{os.getuid()}.lock"


@contextlib.contextmanager
def exclusive(grouped: bool) -> Iterator[None]:
    """Around a run of student code: nothing without a group (``grouped``); else one run at a time on
    this machine for this user, and the run's processes gone before the next starts (re-entrant)."""
    global _depth, _fd
    if grouped:
        yield
        return
    with _lock:
        if _depth == 0:
            fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            _fd = fd
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
            if _depth == 0 and _fd is not None:
                os.close(_fd)  # releases the lock
                _fd = None


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[19])


def children(pid: int) -> list[tuple[int, int]]:
    """(pid, start time) of the children of ``pid``: bubblewrap's child is its sandbox's PID 1."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[1] == pid:
                found.append((int(entry.name), st[2]))
    return found


def wait_gone(inits: list[tuple[int, int]], timeout: float = SETTLE_TIMEOUT) -> bool:
    """Wait until each PID 1 in ``inits`` has exited: the kernel reaps every other process of a PID
    namespace before its PID 1 finishes exiting, so the run's processes no longer count then."""
    deadline = time.monotonic() + timeout
    while True:
        live = [
            p for p, start in inits if (st := _stat(p)) is not None and st[2] == start and st[0] not in "ZX"
        ]
        if not live or time.monotonic() >= deadline:
            return not live
        time.sleep(0.02)


def kill_marked(marker: str) -> None:
    """Kill every process whose environment carries this sandbox's marker (Linux /proc)."""
    needle = f"PE_SANDBOX_ID={marker}".encode()
    for _ in range(3):
        found = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    os.kill(int(entry.name), signal.SIGKILL)
                    found = True
            except (OSError, ValueError):
                continue
        if not found:
            return
        time.sleep(0.05)

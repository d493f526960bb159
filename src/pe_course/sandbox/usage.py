"""What a sandboxed run used (peak memory, processes, CPU seconds, limits it hit). The figures come from
the run's resource group (:mod:`.groups`); every record keeps them (``resources`` of ``.grading.json``),
and :mod:`pe_course.record.attention` says which of them need an instructor's look."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Usage:
    """What one sandboxed run (or several, merged) used, and which group limits it hit."""

    peak_memory: int = 0  # bytes
    peak_processes: int = 0  # processes and threads at once
    cpu_seconds: float = 0.0
    hits: list[str] = field(default_factory=list)  # memory | processes | cpu | disk | background

    def merge(self, other: Usage) -> None:
        self.peak_memory = max(self.peak_memory, other.peak_memory)
        self.peak_processes = max(self.peak_processes, other.peak_processes)
        self.cpu_seconds += other.cpu_seconds
        self.hits = list(dict.fromkeys([*self.hits, *other.hits]))

    def to_dict(self, memory_limit: int = 0, process_limit: int = 0, cpu_limit: float = 0.0) -> dict:
        """The record's form, with the limits the run had (0: no resource group)."""
        data = asdict(self)
        data["cpu_seconds"] = round(self.cpu_seconds, 3)
        data.update(memory_limit=memory_limit, process_limit=process_limit, cpu_limit=cpu_limit)
        return data


# A sandboxed run's own processes, by the file their command line runs: bubblewrap (twice with a PID
# namespace) starts the program (the grading worker or the notebook runner), and the notebook runner
# starts one kernel (``python -c <nbexec.LAUNCH>``, whose code ends with the marker, as the launcher
# module's name does). A runner forked by the zygote (sandbox/inside/zygote.py) is a root of its own (its
# parent is the zygote, outside the sandbox), and so is bubblewrap's placeholder (``cat``, by the pid
# recorded when it started, not by its command line); the runner's kernel has the zygote's command
# line. Anything else in the group, a fork of any of them included, is the student's.
ROLE_FILES = {
    "bwrap": b"bwrap",
    "worker": b"/worker.py",
    "nbexec": b"/nbexec.py",
    "kernel": b"ipykernel_launcher",
    "zygote": b"/zygote.py",
}
CHILD_ROLES = {"bwrap": ("bwrap", "worker", "nbexec"), "nbexec": ("kernel", "zygote")}


def _role(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:6]
    except OSError:
        return ""
    if argv and argv[0].endswith(ROLE_FILES["bwrap"]):
        return "bwrap"
    return next(
        (
            role
            for role, marker in ROLE_FILES.items()
            if role != "bwrap" and any(a.endswith(marker) or a == marker for a in argv)
        ),
        "",
    )


def strays(pids: list[int], roots: int | dict[int, str]) -> list[int]:
    """The processes among ``pids`` (one group's) that the sandboxed program did not start as part of
    itself: what the student's code started and left running. ``roots``: the program's pid, or pid ->
    role of the processes the grader started itself."""
    parents = {}
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            parents[pid] = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    own = {roots: _role(roots)} if isinstance(roots, int) else {p: r or _role(p) for p, r in roots.items()}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if pid not in own and parent in own and _role(pid) in CHILD_ROLES.get(own[parent], ()):
                own[pid] = _role(pid)
                grew = True
    return [pid for pid in pids if pid not in own]

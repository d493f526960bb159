"""What a sandboxed run may use, and the per-process limits set on it before it starts.

:class:`Limits` holds the figures (CPU seconds, memory, processes, files, scratch size); :func:`rlimits`
turns them into the per-process rlimits every sandboxed program gets, with or without bubblewrap and
with or without a resource group (:mod:`.groups` bounds the run as a whole). Without bubblewrap, as root,
:func:`set_limits_and_drop_root` also runs the program as ``nobody`` behind Landlock (:mod:`.landlock`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

from . import groups, landlock, sharing
from .policy import NOBODY

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed program (per process, inherited by its children)."""

    cpu_seconds: int = 120
    address_space: int = 4096 * MiB
    file_size: int = 64 * MiB
    open_files: int = 256
    processes: int = 256
    call_timeout: float = 10.0  # wall clock for one function call answered by the worker
    load_timeout: float = 60.0  # wall clock for executing a submission's code cells
    notebook_timeout: float = 120.0  # wall clock for one whole notebook run, or for grading one notebook
    # for the whole resource group of one run (all its processes together; see groups.py)
    group_memory: int = 2048 * MiB
    group_processes: int = 64  # processes and threads at once
    group_cpu_seconds: float = 300.0
    scratch_files: int = 10_000  # entries in the run's scratch directory
    scratch_bytes: int = 512 * MiB

    def scaled(self, **changes) -> Limits:
        return replace(self, **changes)

    def record(self, usage: groups.Usage) -> dict:
        """A run's usage as the .grading.json record keeps it, with these limits."""
        return usage.to_dict(self.group_memory, self.group_processes, self.group_cpu_seconds)

    def exceeded(self, hits: Sequence[str]) -> str:
        """The group limits in ``hits`` as one Indonesian sentence for the student."""
        text = {
            "memory": f"batas memori {size_text(self.group_memory)} terlampaui",
            "address-space": f"memori habis (MemoryError; batas ruang alamat {size_text(self.address_space)} per proses)",
            "processes": f"terlalu banyak proses atau thread (batas {self.group_processes})",
            "cpu": f"batas waktu CPU {self.group_cpu_seconds:g} detik terlampaui",
            "disk": f"terlalu banyak berkas di direktori kerja (batas {self.scratch_files} berkas, "
            f"{size_text(self.scratch_bytes)})",
            "background": "proses yang dimulai notebook masih berjalan setelah notebook selesai (dihentikan)",
        }
        return "; ".join(text.get(h, h) for h in hits)


def rlimits(limits: Limits, grouped: bool = True) -> list[tuple[int, int]]:
    """The per-process limits of a sandboxed program, as ``(resource, value)`` for ``setrlimit``.

    ``RLIMIT_NPROC`` counts all the grading user's processes, so it is shared by every run: with a
    resource group (``grouped``) it is left alone, the group bounds the run's processes (sharing.py)."""
    nproc = sharing.nproc(limits.processes, grouped)
    return [
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_AS, limits.address_space),
        (resource.RLIMIT_FSIZE, limits.file_size),
        (resource.RLIMIT_NOFILE, limits.open_files),
        *([(resource.RLIMIT_NPROC, nproc)] if nproc is not None else []),
        (resource.RLIMIT_CORE, 0),
    ]


def set_limits(
    limits: Limits, group_files: Sequence[str] = (), fence: Sequence[str] = (), scratch: str = ""
) -> None:
    """Runs in the child between fork and exec: join the resource group, apply rlimits, leave our
    process group; with ``fence`` (no bubblewrap), Landlock: read only ``fence``, write only ``scratch``."""
    groups.join(list(group_files))
    os.setsid()
    for res, value in rlimits(limits, grouped=bool(group_files)):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(res, (value, value))
    if fence:
        landlock.restrict(fence, scratch)  # raises: never started unprotected by mistake


def size_text(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n / MiB:g} MiB"


def set_limits_and_drop_root(
    limits: Limits, group_files: Sequence[str] = (), fence: Sequence[str] = (), scratch: str = ""
) -> None:
    """Fallback without bwrap when grading as root: at least do not run student code as root."""
    set_limits(limits, group_files)
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    if fence:
        landlock.restrict(fence, scratch)


@functools.lru_cache(maxsize=1)
def can_drop_root() -> bool:
    """As root without bwrap, run student code as nobody if nobody can run this Python."""
    if os.geteuid() != 0:
        return False
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import numpy"],
            preexec_fn=functools.partial(set_limits_and_drop_root, Limits()),
            capture_output=True,
            timeout=60,
            check=False,
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0

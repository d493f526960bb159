"""One resource group per sandboxed run: memory, processes and CPU bounded for the run as a whole.

Per-process rlimits leave a submission free to fork many processes that each stay under them (and
RLIMIT_NPROC does not apply to root, which bwrap's user namespace maps the sandbox's user to). A
:class:`ResourceGroup` puts the sandboxed program and everything it starts into a Linux control
group with limits on the whole group:

- memory (``memory.limit_in_bytes`` + swap in cgroup v1, ``memory.max`` in v2): going over it makes
  the kernel end a process *of that group* (the one that asked), never the grader or another student;
- processes and threads (``pids.max``): a fork or thread start beyond it fails inside the group;
- CPU seconds of the whole group, and the size of the run's scratch directory (files and bytes):
  watched by a monitor thread that ends the group when it goes over;
- ending the run kills every process in the group (frozen first in v1, ``cgroup.kill`` in v2), also
  those that left the process group and cleared their environment.

Which mechanism is used is found once per process (:func:`mechanism`): cgroup v2 where our own part
of the hierarchy is delegated to us with the memory and pids controllers, else cgroup v1 where the
memory, pids, cpuacct and freezer hierarchies are writable (as for root on this project's machines),
or where an administrator handed this user a subtree (:mod:`.delegation`). Where neither is available,
:func:`mechanism` returns ``None`` and the sandbox refuses student code (:mod:`.policy`) unless the
instructor accepted running without a group (then runs are one at a time, :mod:`.sharing`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from . import delegation, leftovers, teardown
from .groupfs import end_group, group_pids, kill_group, read_int, read_keyed, too_big
from .usage import Usage

V1_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
MONITOR_INTERVAL = 0.05
SCRATCH_INTERVAL = 0.25


@dataclass(frozen=True)
class Mechanism:
    version: int  # 1 or 2
    parents: dict[str, Path]  # controller (v1) or "unified" (v2) -> directory new groups are made in
    delegated: bool = False  # v1: a subtree an administrator handed over (pe-course setup-groups)

    @property
    def description(self) -> str:
        return f"cgroup v{self.version}" + (", delegated" if self.delegated else "")


def own_cgroups() -> dict[str, str]:
    """controller -> our cgroup path, from /proc/self/cgroup ("" is the v2 unified hierarchy)."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                out[controller] = path
    return out


def _writable_dir(path: Path) -> bool:
    probe = path / f"pe-probe-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


def _v2() -> Mechanism | None:
    own = own_cgroups().get("")
    root = next(
        (
            p
            for p in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
            if (p / "cgroup.controllers").exists()
        ),
        None,
    )
    if own is None or root is None:
        return None
    here = root / own.lstrip("/")
    # the nearest ancestor (ourselves included) that already hands memory and pids to its children
    for candidate in [here, *here.parents]:
        if not str(candidate).startswith(str(root)):
            break
        with contextlib.suppress(OSError):
            enabled = (candidate / "cgroup.subtree_control").read_text().split()
            if {"memory", "pids"} <= set(enabled) and _writable_dir(candidate):
                return Mechanism(2, {"unified": candidate}, delegated=os.geteuid() != 0)
    return None


def _v1() -> Mechanism | None:
    own = own_cgroups()
    parents = {}
    for controller in V1_CONTROLLERS:
        mount = V1_ROOT / controller
        if controller not in own or not (mount / "cgroup.procs").exists():
            return None
        parent = mount / own[controller].lstrip("/")
        if not _writable_dir(parent):  # not ours: a subtree an administrator gave us (delegation.py)?
            found = delegation.find_v1(V1_ROOT, own, V1_CONTROLLERS, _writable_dir)
            return Mechanism(1, found, delegated=True) if found else None
        parents[controller] = parent
    return Mechanism(1, parents)


@functools.lru_cache(maxsize=1)
def mechanism() -> Mechanism | None:
    """The control-group mechanism this process can use for sandboxes, or None."""
    if os.environ.get("PE_COURSE_NO_CGROUPS"):
        return None
    return _v2() or _v1()


class ResourceGroup:
    """The control group of one sandboxed run (see the module docstring)."""

    def __init__(
        self,
        mech: Mechanism,
        memory: int,
        processes: int,
        cpu_seconds: float,
        scratch: Path | None = None,
        scratch_files: int = 10_000,
        scratch_bytes: int = 512 << 20,
    ) -> None:
        self.mech, self.memory, self.processes, self.cpu_limit = mech, memory, processes, cpu_seconds
        self.scratch, self.scratch_files, self.scratch_bytes = scratch, scratch_files, scratch_bytes
        name = f"{teardown.name_prefix()}{uuid.uuid4().hex[:12]}"
        self.dirs = {key: parent / name for key, parent in mech.parents.items()}
        self._hits: list[str] = []
        self._peak_processes = 0
        self._cpu_base = 0.0
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        try:
            leftovers.record_place(mech)  # before the group exists: if this grader is killed outright
            with teardown.creating():  # registered before its first directory exists
                teardown.add(self, self.remove, teardown.GROUP)
                for path in self.dirs.values():
                    path.mkdir()
            self._set_limits()
        except OSError:
            self.close()
            raise
        self._oom_base, self._pids_base = self._oom_kills(), self._pids_refused()

    # -- set up -------------------------------------------------------------------------------
    def _set_limits(self) -> None:
        if self.mech.version == 2:
            d = self.dirs["unified"]
            (d / "memory.max").write_text(str(self.memory))
            with contextlib.suppress(OSError):
                (d / "memory.swap.max").write_text("0")
            (d / "pids.max").write_text(str(self.processes))
            return
        memory = self.dirs["memory"]
        (memory / "memory.limit_in_bytes").write_text(str(self.memory))
        with contextlib.suppress(OSError):  # swap accounting may be off; then there is no swap to use
            (memory / "memory.memsw.limit_in_bytes").write_text(str(self.memory))
        (self.dirs["pids"] / "pids.max").write_text(str(self.processes))

    @property
    def procs_files(self) -> list[str]:
        """Files a process writes its pid to to join the group (done in the child before exec)."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def start_monitor(self) -> None:
        self._monitor = threading.Thread(target=self._watch, name="pe-cgroup-monitor", daemon=True)
        self._monitor.start()

    # -- reading -----------------------------------------------------------------------------
    def _processes_now(self) -> int:
        key = "unified" if self.mech.version == 2 else "pids"
        return read_int(self.dirs[key] / "pids.current")

    def _cpu_total(self) -> float:
        if self.mech.version == 2:
            return read_keyed(self.dirs["unified"] / "cpu.stat").get("usage_usec", 0) / 1e6
        return read_int(self.dirs["cpuacct"] / "cpuacct.usage") / 1e9

    def _peak_memory(self) -> int:
        if self.mech.version == 2:
            return read_int(self.dirs["unified"] / "memory.peak")
        return max(
            read_int(self.dirs["memory"] / "memory.max_usage_in_bytes"),
            read_int(self.dirs["memory"] / "memory.memsw.max_usage_in_bytes"),
        )

    def _oom_kills(self) -> int:
        if self.mech.version == 2:
            return read_keyed(self.dirs["unified"] / "memory.events").get("oom_kill", 0)
        return read_keyed(self.dirs["memory"] / "memory.oom_control").get("oom_kill", 0)

    def _pids_refused(self) -> int:
        key = "unified" if self.mech.version == 2 else "pids"
        return read_keyed(self.dirs[key] / "pids.events").get("max", 0)

    def hits(self) -> list[str]:
        """The group limits this run has gone over so far (since the last :meth:`reset`)."""
        found = list(self._hits)
        if self._oom_kills() > self._oom_base:
            found.append("memory")
        if self._pids_refused() > self._pids_base:
            found.append("processes")
        return list(dict.fromkeys(found))

    def usage(self) -> Usage:
        self._peak_processes = max(self._peak_processes, self._processes_now())
        return Usage(
            self._peak_memory(),
            self._peak_processes,
            max(0.0, self._cpu_total() - self._cpu_base),
            self.hits(),
        )

    def reset(self) -> None:
        """Start counting afresh (a long-lived runner between two notebooks)."""
        if self.mech.version == 1:
            with contextlib.suppress(OSError):
                (self.dirs["memory"] / "memory.max_usage_in_bytes").write_text("0")
            with contextlib.suppress(OSError):
                (self.dirs["memory"] / "memory.memsw.max_usage_in_bytes").write_text("0")
        self._hits.clear()
        self._peak_processes = self._processes_now()
        self._cpu_base = self._cpu_total()
        self._oom_base, self._pids_base = self._oom_kills(), self._pids_refused()

    # -- watching ----------------------------------------------------------------------------
    def poll(self, scratch: bool = True) -> list[str]:
        """Check the watched limits now (CPU, scratch size), end the group if one is exceeded; hits."""
        self._peak_processes = max(self._peak_processes, self._processes_now())
        if self._cpu_total() - self._cpu_base > self.cpu_limit:
            self._over("cpu")
        if (
            scratch
            and self.scratch is not None
            and too_big(self.scratch, self.scratch_files, self.scratch_bytes)
        ):
            self._over("disk")
        return self.hits()

    def _watch(self) -> None:
        next_scratch = 0.0
        while not self._stop.wait(MONITOR_INTERVAL):
            due = time.monotonic() >= next_scratch
            if due:
                next_scratch = time.monotonic() + SCRATCH_INTERVAL
            self.poll(scratch=due)

    def _over(self, what: str) -> None:
        if what not in self._hits:
            self._hits.append(what)
        self.kill()

    # -- ending ------------------------------------------------------------------------------
    def pids(self) -> list[int]:
        return group_pids(self.mech.version, self.dirs)

    def kill(self) -> None:
        """Kill every process of the group, however it detached itself."""
        kill_group(self.mech.version, self.dirs)

    def close(self) -> Usage:
        """Stop watching, kill what is left, remove the group; what the run used."""
        self._stop.set()
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join(timeout=2)
        usage = self.usage() if all(d.exists() for d in self.dirs.values()) else Usage(hits=list(self._hits))
        self.remove()
        return usage

    def remove(self) -> None:
        """Kill what is left and remove the group's directories (no waiting on the monitor: see teardown)."""
        end_group(self.mech.version, self.dirs)
        teardown.removed(self)


def join(procs_files: list[str]) -> None:
    """Put the calling process into the group (runs in the child between fork and exec)."""
    pid = str(os.getpid())
    for path in procs_files:
        with open(path, "w") as f:
            f.write(pid)

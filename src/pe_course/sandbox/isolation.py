"""Run untrusted programs (student notebooks, the grading worker) in a sandbox.

Always: resource limits (CPU seconds, address space, file size, open files), a private scratch
directory that is deleted afterwards, a minimal environment, a wall-clock limit enforced by the
caller, and the whole process tree killed at the end.

With bubblewrap (``bwrap``): a read-only view of the Python installation only (no course files,
no ``graders/``, no gradebook), no network, private ``/tmp``, PID and user namespaces (the program
runs as ``nobody``), and the sandbox dies with its parent.

Without working bubblewrap a :class:`Sandbox` refuses to exist (:class:`IsolationUnavailable`, see
:mod:`.policy`) unless the caller opts in for trusted code (``unisolated=True``, or ``use_bwrap=False``).
Then the program still runs with the limits above, as ``nobody`` when grading as root, and — where the
kernel has Landlock — unable to read the course files or write outside its scratch directory
(:mod:`.landlock`); :attr:`Sandbox.isolation` says plainly what is *not* isolated, and every record
keeps that line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..record.outcomes import UNISOLATED
from . import groups, landlock, sharing, teardown
from .limits import Limits, can_drop_root, set_limits, set_limits_and_drop_root, size_text
from .policy import (
    NAMESPACES,
    NOBODY,
    PROC_DEV,
    SYSTEM_LINKS,
    IsolationUnavailable,
    bwrap_path,
    bwrap_problem,
    group_refusal,
    refusal,
)
from .scratch import new_scratch, remove_scratch, write_file

MOUNT_POINT = "/sandbox"  # where the scratch directory appears inside bwrap


def python_view(system: Sequence[str]) -> list[str]:
    """bubblewrap and its arguments for the view every sandbox has: ``/usr`` and the Python installation
    read-only, a private ``/tmp``, the system's directory links, ``system`` (how /proc and /dev are
    made), and what matplotlib reads in ``/etc``."""
    # Order matters: the private /tmp first, so that a Python installed under /tmp (a CI clone's
    # venv, say) is bound on top of it instead of being hidden by it.
    cmd = [bwrap_path() or "bwrap", "--ro-bind", "/usr", "/usr", "--tmpfs", "/tmp"]
    for root in _python_roots():
        cmd += ["--ro-bind", root, root]
    cmd += [*SYSTEM_LINKS, *system]
    for path in ("/etc/alternatives", "/etc/fonts"):
        cmd += ["--ro-bind-try", path, path]
    return cmd


def _python_roots() -> list[str]:
    """Directories that hold the interpreter and installed packages (bound read-only)."""
    roots = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            roots.add(sysconfig.get_paths()[key])
    # Keep only outermost directories, and never anything under /usr (bound as a whole).
    out: list[str] = []
    for root in sorted(roots, key=len):
        if (
            root == "/usr"
            or root.startswith("/usr/")
            or any(root == o or root.startswith(o + os.sep) for o in out)
        ):
            continue
        out.append(root)
    return out


@dataclass
class Sandbox:
    """Factory for sandboxed processes; one instance can start many programs."""

    limits: Limits = field(default_factory=Limits)
    use_bwrap: bool | None = None  # None: bubblewrap, or IsolationUnavailable (unless ``unisolated``)
    use_groups: bool | None = None  # None: a resource group per run when control groups can be used
    unisolated: bool = False  # the instructor's opt-in (trusted code only): run without bubblewrap if need be
    ungrouped: bool = False  # the instructor's opt-in: run without a resource group (one run at a time)
    prefork: bool = True  # notebook runners forked pre-imported into their sandboxes (sandbox/prefork.py)

    def __post_init__(self) -> None:
        problem = bwrap_problem()
        if self.use_bwrap is None:
            if problem is not None and not self.unisolated:
                raise IsolationUnavailable(refusal(problem))
            self.use_bwrap = problem is None
        elif self.use_bwrap and problem is not None:
            raise IsolationUnavailable(refusal(problem))
        if not self.use_bwrap:
            self.unisolated = True  # asked for by name (use_bwrap=False) or opted in
        if self.use_groups is None:
            self.use_groups = groups.mechanism() is not None
            if not self.use_groups and not (self.unisolated or self.ungrouped):
                raise IsolationUnavailable(group_refusal())
        elif self.use_groups and groups.mechanism() is None:
            raise RuntimeError("resource groups were requested but no control group can be created here")

    @property
    def isolation(self) -> str:
        """One line for instructors: what the sandbox does and does not isolate."""
        limits = "resource limits, time-outs, private scratch directory, process tree killed"
        mech = groups.mechanism() if self.use_groups else None
        if mech is not None:
            group = (
                f"; one resource group per run ({mech.description}): memory {size_text(self.limits.group_memory)}, "
                f"{self.limits.group_processes} processes/threads, {self.limits.group_cpu_seconds:g} CPU seconds, "
                f"scratch {self.limits.scratch_files} files / {size_text(self.limits.scratch_bytes)}"
            )
        else:
            why = "accepted with --without-resource-groups" if self.ungrouped else "no usable control group"
            group = (
                f"; NO resource group ({why}): memory and process limits are per process only, so a "
                "submission can use them many times over with several processes; runs one at a time"
            )
        if self.use_bwrap:
            return (
                f"bubblewrap: read-only Python only, no course files, no network, private /tmp and PIDs; "
                f"{limits}{group}"
            )
        why = bwrap_problem() or "bubblewrap not used"
        who = "as nobody" if can_drop_root() else "as the grading user"
        if os.geteuid() == 0 and not can_drop_root():
            who += " without capabilities"
        fence = landlock.description()
        if fence:
            reach = f"{fence}; it can use the network"
        else:
            reach = (
                "NO Landlock in this kernel: it can read what that user can read (the course's reference "
                "solutions included), write where that user can write, and use the network"
            )
        return (
            f"{UNISOLATED} (opted in for trusted code: --unisolated / c.Isolation.required = False; {why}): "
            f"{limits}{group}; student code runs {who}; {reach}."
        )

    def group(self, scratch: Path) -> groups.ResourceGroup | None:
        """A new resource group for one run, or None when groups are off."""
        mech = groups.mechanism() if self.use_groups else None
        if mech is None:
            return None
        lim = self.limits
        return groups.ResourceGroup(
            mech,
            lim.group_memory,
            lim.group_processes,
            lim.group_cpu_seconds,
            scratch,
            lim.scratch_files,
            lim.scratch_bytes,
        )

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """A private working directory, removed with everything in it afterwards."""
        path = new_scratch()
        try:
            yield path
        finally:
            remove_scratch(path)

    def inside(self, scratch: Path, name: str) -> str:
        """The path of ``scratch/name`` as the sandboxed program sees it."""
        return f"{MOUNT_POINT}/{name}" if self.use_bwrap else str(scratch / name)

    def environment(self, scratch: Path, marker: str) -> dict[str, str]:
        home = MOUNT_POINT if self.use_bwrap else str(scratch)
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": home,
            "TMPDIR": "/tmp" if self.use_bwrap else str(scratch),
            "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": f"{home}/.mplconfig",
            "IPYTHONDIR": f"{home}/.ipython",
            "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter-runtime",
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PE_SANDBOX_ID": marker,
        }

    def command(self, argv: Sequence[str], scratch: Path) -> list[str]:
        if not self.use_bwrap:
            return list(argv)
        return [
            *python_view(PROC_DEV),
            "--bind",
            str(scratch),
            MOUNT_POINT,
            "--chdir",
            MOUNT_POINT,
            *NAMESPACES,
            "--new-session",
            *argv,
        ]

    def start(self, argv: Sequence[str], scratch: Path, **popen_kwargs) -> SandboxedProcess:
        """Start ``argv`` in the sandbox with ``scratch`` as its working directory."""
        marker = uuid.uuid4().hex
        _prepare_scratch(scratch, use_bwrap=bool(self.use_bwrap))
        group = self.group(scratch)
        files = group.procs_files if group is not None else []
        preexec = functools.partial(set_limits, self.limits, files)
        command = self.command(argv, scratch)
        if not self.use_bwrap:
            fence = [*_python_roots(), *landlock.READ_ONLY] if landlock.abi() else []
            if can_drop_root():
                preexec = functools.partial(set_limits_and_drop_root, self.limits, files, fence, str(scratch))
            else:
                preexec = functools.partial(set_limits, self.limits, files, fence, str(scratch))
            if not can_drop_root() and os.geteuid() == 0 and shutil.which("setpriv"):
                # root that cannot become nobody: at least no capabilities (no raising of hard limits)
                command = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", *command]
        try:
            with teardown.creating():  # a stop signal waits until the process is registered
                proc = subprocess.Popen(
                    command,
                    cwd=scratch,
                    env=self.environment(scratch, marker),
                    preexec_fn=preexec,
                    close_fds=True,
                    **popen_kwargs,
                )
                started = SandboxedProcess(proc, marker, group)
        except BaseException:
            if group is not None:
                group.close()
            raise
        if group is not None:
            group.start_monitor()
        return started


def _prepare_scratch(scratch: Path, use_bwrap: bool) -> None:
    """Seed matplotlib's font cache (building it costs seconds) and make the directory usable.

    Called on a scratch directory nothing has run in yet.
    """
    mpl = scratch / ".mplconfig"
    mpl.mkdir(exist_ok=True)
    cache = _matplotlib_font_cache()
    if cache is not None:
        write_file(mpl, cache.name, cache.read_bytes())
    if not use_bwrap and can_drop_root():
        for path in [scratch, *scratch.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


@functools.lru_cache(maxsize=1)
def _matplotlib_font_cache() -> Path | None:
    try:
        import matplotlib
        from matplotlib import font_manager  # noqa: F401  (builds the cache if missing)
    except ImportError:
        return None
    found = sorted(Path(matplotlib.get_cachedir()).glob("fontlist-*.json"))
    return found[-1] if found else None


class SandboxedProcess:
    """A started sandboxed program; :meth:`kill` ends it and everything it started."""

    def __init__(
        self, proc: subprocess.Popen, marker: str, group: groups.ResourceGroup | None = None
    ) -> None:
        self.proc = proc
        self.marker = marker
        self.group = group
        self.roots: dict[int, str] = {proc.pid: ""}  # what usage.strays counts as the program's own
        self.usage = groups.Usage()  # filled in by kill(): what the run used, limits it hit
        teardown.add(self, self.kill_now, teardown.PROCESS)

    def __enter__(self) -> SandboxedProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.kill()

    def kill(self) -> None:
        """End the program and everything it started, remove its group; what it used is in ``usage``.
        Without a group, as an ordinary user: also wait until its processes are reaped (sharing.py)."""
        alone = self.group is None and os.geteuid() != 0 and self.proc.poll() is None
        inits = sharing.children(self.proc.pid) if alone else []
        self.kill_now()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.group is not None:
            self.usage = self.group.close()
            self.group = None
        sharing.wait_gone(inits)
        teardown.removed(self)

    def kill_now(self) -> None:
        """Kill the program and everything it started, without waiting on anything (see teardown)."""
        group = self.group
        if group is not None:
            group.kill()  # every process of the run, however it detached itself
        if self.proc.returncode is None:  # not reaped yet: the pid is still this program's
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGKILL)
        sharing.kill_marked(self.marker)  # processes that left our process group (setsid, double fork)

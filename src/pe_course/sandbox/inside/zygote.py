"""A pre-imported notebook runner and kernel, forked into each student's sandbox (runs on the host).

A one-notebook student's sandboxed run spent about 0.9 of its 2 CPU-seconds importing the same modules
every time: nbformat and nbclient in the runner, ipykernel, IPython, numpy and matplotlib in the kernel
(measured 2026-12-03, ``bench/profile_student.py``). This program imports them once per grading process
and then, for each student, forks a copy of itself into that student's sandbox:

- the sandbox is made by bubblewrap exactly as for every other run (namespaces, read-only Python, the
  run's scratch directory, its resource group and limits), with a placeholder program in it;
- the fork (still on the host, single-threaded, nothing of any student's in it) joins the run's resource
  group and rlimits, then the sandbox's user, cgroup, IPC, UTS, network, PID and mount namespaces and its
  root (as ``nsenter``/``flatpak enter`` do), and forks again so that the runner is inside the PID
  namespace; the runner drops every capability, sets ``no_new_privs`` and a new session (as bubblewrap
  does for its program) before anything else runs, and checks ``/proc/self/status`` that it did;
- the runner forks the kernel at once (still clean, single-threaded), which waits for the command line
  and environment that jupyter_client would have launched it with, then starts as
  ``python -c nbexec.LAUNCH`` would.

Student code therefore only ever runs in a fresh fork of an image no student touched, inside a sandbox
built for that student alone; what one student's code does cannot reach the next student's (their
processes, files and memory are not shared, and this process is outside every sandbox's PID namespace).
A fork that cannot do all of the above exits before running anything, and the grader falls back to
starting the runner the ordinary way (:func:`.prefork.start_runner` returns None).

The zygote itself runs in a read-only mount namespace laid out as the sandboxes are (see
:mod:`.prefork`), so its forks' paths and ``/proc/self/exe`` are the sandbox's, read-only.

Usage: ``python zygote.py FD`` with the sandbox's environment; FD is a Unix socket the grading process
sends requests on (one JSON message, the runner's three pipe ends as SCM_RIGHTS) and reads one JSON
reply per request from.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import resource
import select
import signal
import socket
import sys
import threading

# What the runner and a kernel import before any student code runs (nbexec.main, nbexec.LAUNCH, and the
# notebooks' first cell). jsonschema's optional URI grammar is left out as nbexec leaves it out.
sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
PRELOAD = (
    "nbformat",
    "nbclient",
    "jupyter_core.utils",
    "jupyter_client.manager",
    "jupyter_client.provisioning.local_provisioner",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "IPython.core.completer",
    "numpy",
    "matplotlib.pyplot",
)

CLONE = {  # namespace file in /proc/PID/ns -> CLONE_NEW* (the user namespace first, the mounts last)
    "user": 0x10000000,
    "cgroup": 0x02000000,
    "ipc": 0x08000000,
    "uts": 0x04000000,
    "net": 0x40000000,
    "pid": 0x20000000,
    "mnt": 0x00020000,
}
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_SET_CHILD_SUBREAPER, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 36, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_libc = ctypes.CDLL(None, use_errno=True)
REAP_EVERY = 1.0  # seconds between reaping the runners whose sandboxes ended (orphaned to us)
BASE_PATH: list[str] = []  # sys.path without this file's folder (a kernel's, as ``python -c`` starts it)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _prctl(option: int, arg: int = 0, arg3: int = 0) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(arg3), 0, 0), f"prctl({option})")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_privileges() -> None:
    """No capabilities (bounding, ambient, effective, permitted, inheritable), no new privileges ever."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)), data), "capset")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f.read().splitlines() if line.startswith("Cap"))
    if any(int(value, 16) for value in status.values()) or len(status) < 5:
        raise OSError(f"capabilities left after dropping them: {status}")


def _enter(target: int, parent: int) -> None:
    """Join the namespaces and the root of process ``target`` (a sandbox's init, the child of bubblewrap's
    ``parent``) — except the PID namespace, which only the next fork is in."""
    pinned = os.pidfd_open(target)  # while it lives, /proc/TARGET is that process (no pid reuse)
    with open(f"/proc/{target}/stat") as f:
        if int(f.read().rsplit(")", 1)[1].split()[1]) != parent:
            raise OSError(f"process {target} is not bubblewrap's")
    fds = {}
    for name in CLONE:
        own, theirs = os.readlink(f"/proc/self/ns/{name}"), os.readlink(f"/proc/{target}/ns/{name}")
        if own != theirs:
            fds[name] = os.open(f"/proc/{target}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    if "user" not in fds or "mnt" not in fds or "pid" not in fds:
        raise OSError("the target is not in its own user, mount and PID namespaces")
    root = os.open(f"/proc/{target}/root", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    if select.select([pinned], [], [], 0)[0]:
        raise OSError(f"process {target} ended")
    os.close(pinned)
    # A namespace bubblewrap made before its user namespace (as root: the cgroup one) is joined while we
    # still have our own capabilities; those the user namespace owns, once we are in it.
    for name in [n for n in fds if n != "user"]:
        if _libc.setns(fds[name], CLONE[name]) == 0:
            os.close(fds.pop(name))
    for name, fd in fds.items():
        _check(_libc.setns(fd, CLONE[name]), f"setns({name})")
        os.close(fd)
    os.fchdir(root)
    os.chroot(".")
    os.close(root)


def _redirect(fds: dict[int, int]) -> None:
    """Make ``fds`` (target -> source) the only open descriptors, at their targets."""
    import fcntl

    high = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 100) for target, source in fds.items()}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in high.values():
            with contextlib.suppress(OSError):
                os.close(fd)
    for target, source in high.items():
        os.dup2(source, target)
        os.close(source)


def _kernel(commands: int) -> None:
    """The waiting kernel: the command line and environment jupyter_client would launch it with, then
    what ``python -c nbexec.LAUNCH`` does. Never returns."""
    data = b""
    while chunk := os.read(commands, 1 << 16):
        data += chunk
    if not data:
        os._exit(0)  # the runner ended without starting a kernel
    request = json.loads(data)
    null = os.open(os.devnull, os.O_RDWR)
    _redirect({0: null, 1: null, 2: null})  # as the runner's kernel: no input, output discarded
    os.setsid()
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    if "numpy.random.mtrand" in sys.modules:  # (random reseeds itself in a fork; numpy's generator does not)
        sys.modules["numpy.random.mtrand"].seed()
    sys.argv = ["-c", *request["args"]]
    sys.path[:] = ["", *BASE_PATH]  # as ``python -c`` makes it
    code = 0
    try:
        launch = compile(sys.modules["nbexec"].LAUNCH, "<string>", "exec")
        exec(launch, {"__name__": "__main__"})  # noqa: S102 (our own constant: the kernel's launch code)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        import atexit

        atexit._run_exitfuncs()
    os._exit(code)


def _runner(request: dict, fds: list[int], ready: int) -> None:
    """In the sandbox: drop privileges, fork the waiting kernel, run nbexec. Never returns."""
    drop_privileges()
    os.setsid()
    stdin, stdout, life = fds
    commands, to_kernel = os.pipe()
    null = os.open(os.devnull, os.O_WRONLY)
    _redirect({0: stdin, 1: stdout, 2: null, 3: life, 4: commands, 5: to_kernel, 6: ready})
    os.environ.clear()
    os.environ.update(request["env"], PWD=request["cwd"])  # PWD: as bubblewrap's --chdir sets it
    os.chdir(request["cwd"])
    kernel = os.fork()
    if kernel == 0:
        _redirect({4: 4})
        try:
            _kernel(4)
        finally:
            os._exit(72)
    os.close(4)
    os.write(6, b"1")
    os.close(6)
    sys.path[0] = request["cwd"]  # as for ``python nbexec.py`` in the scratch directory
    import nbexec

    nbexec.PREPARED = (kernel, 5)
    code = 1
    try:
        code = nbexec.main()
    finally:
        sys.stdout.flush()
        os._exit(code)


def _spawn(request: dict, fds: list[int]) -> int:
    """The fork on the host that enters the sandbox. Returns the runner's pid; raises if it failed."""
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(report_r)
            if os.geteuid() == 0:
                os.setgroups([])
            for path in request["group_files"]:  # the run's resource group (sandbox/groups.py)
                with open(path, "w") as group:
                    group.write(str(os.getpid()))
            os.setsid()
            for which, value in request["rlimits"]:  # the run's limits (limits.rlimits)
                with contextlib.suppress(ValueError, OSError):  # as limits.set_limits
                    resource.setrlimit(which, (value, value))
            _enter(request["target"], request["parent"])
            ready_r, ready_w = os.pipe()
            runner = os.fork()
            if runner == 0:
                os.close(ready_r)
                try:
                    _runner(request, fds, ready_w)
                finally:
                    os._exit(71)
            os.close(ready_w)
            ok = os.read(ready_r, 1) == b"1"
            os.write(report_w, str(runner if ok else -1).encode())
            os._exit(0)
        except BaseException as exc:  # noqa: BLE001 (reported, then this fork ends)
            os.write(report_w, f"error {type(exc).__name__}: {exc}"[:500].encode())
            os._exit(70)
    os.close(report_w)
    for fd in fds:
        os.close(fd)
    report = b""
    while chunk := os.read(report_r, 4096):
        report += chunk
    os.close(report_r)
    with contextlib.suppress(ChildProcessError):  # reaped by _reap already
        os.waitpid(pid, 0)
    text = report.decode(errors="replace")
    if not text.lstrip("-").isdigit() or int(text) <= 0:
        raise OSError(text or "the fork ended without a report")
    return int(text)


def _reap() -> None:
    """Runners orphaned to us (we are their subreaper) once their sandbox has ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main() -> int:
    channel = socket.socket(fileno=int(sys.argv[1]))
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        return 1
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    import importlib

    sys.path.pop(0)  # this file's folder, added back below for nbexec only
    BASE_PATH[:] = sys.path
    for name in PRELOAD:
        importlib.import_module(name)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import nbexec  # noqa: F401  (the same file as the copy the ordinary runner runs)

    gc.collect()
    gc.freeze()  # the image's objects: not traversed (and so not copied) by the forks' collections
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1 or threading.active_count() != 1:
        channel.sendall(json.dumps({"error": f"{threads} threads after the imports"}).encode() + b"\n")
        return 1
    channel.sendall(b'{"ready": true}\n')
    while True:
        _reap()
        if not select.select([channel], [], [], REAP_EVERY)[0]:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 16, 3)
        except OSError:
            return 0
        if not message:
            return 0
        try:
            request = json.loads(message)
            if len(fds) != 3:
                raise OSError(f"{len(fds)} descriptors instead of 3")
            reply: dict[str, object] = {"runner": _spawn(request, fds)}
        except Exception as exc:  # noqa: BLE001 (the grader falls back to an ordinary start)
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            reply = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        channel.sendall(json.dumps(reply).encode() + b"\n")


if __name__ == "__main__":
    sys.exit(main())

"""The grader's side of :mod:`.zygote`: notebook runners forked, pre-imported, into their sandboxes.

:func:`start_runner` makes the sandbox as :meth:`Sandbox.start` makes every sandbox (bubblewrap, the
run's resource group and limits), with a placeholder program in it (``cat`` on a pipe only the runner
holds: when the runner ends, the placeholder and with it the sandbox end, as when the runner is the
sandbox's program), and asks this process's zygote to fork the runner into it. It returns ``None``
where that cannot be done (no bubblewrap, not grading as root, turned off with
``c.Isolation.prefork = False``, the zygote could not start or fork), and the caller starts the runner
the ordinary way: the same sandbox, slower.

The zygote runs in a mount namespace of its own that bubblewrap (as root, without a user namespace)
makes as the sandboxes' view: the Python installation and ``/usr`` read-only, an empty ``/sandbox``
with matplotlib's font cache, its own program read-only at ``/pe-zygote`` — plus the host's ``/proc``
and ``/sys/fs/cgroup``, which its forks need to join a sandbox. So a fork's paths (``sys.path``,
matplotlib's folders, its command line) are the sandbox's, and the interpreter its ``/proc/self/exe``
names is reached through a read-only mount: student code cannot change the grader's Python through it.
(As root the sandbox's user *is* root on the host, without capabilities, and would own that file.)
Not as root, the forks' interpreter would be reached through the host's writable mount; runners are
then started the ordinary way.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import multiprocessing.util
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .channel import LineClosed, LineReader, LineTimeout, LineTooLong
from .inside import FOLDER as INSIDE
from .isolation import MOUNT_POINT, Sandbox, SandboxedProcess, _matplotlib_font_cache, python_view
from .limits import rlimits

log = logging.getLogger(__name__)
PROGRAM = INSIDE / "zygote.py"
HOME = "/pe-zygote"  # where the zygote's folder (this package's sandbox/) is, read-only, in its namespace
PLACEHOLDER = ["/usr/bin/sh", "-c", "echo ready && exec cat"]  # `cat` is its role in usage.ROLE_FILES
START_TIMEOUT = 120.0  # the zygote's imports (about a second on an idle machine)
SPAWN_TIMEOUT = 60.0


class ZygoteUnavailable(RuntimeError):
    """The zygote could not start, or could not fork a runner into a sandbox."""


class Zygote:
    """One pre-imported process per grading process (:mod:`.zygote`), spoken to over a Unix socket."""

    def __init__(self, env: dict[str, str]) -> None:
        if os.geteuid() != 0:
            raise ZygoteUnavailable("not grading as root (see sandbox/prefork.py)")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 (kept open as long as the zygote: what it says if it fails)
        try:
            self.proc = subprocess.Popen(
                [*_enclosure(), sys.executable, f"{HOME}/{PROGRAM.name}", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=env,
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self.errors,
            )
        finally:
            theirs.close()
        reply = self._reply(START_TIMEOUT)
        if not reply.get("ready"):
            self.close()
            raise ZygoteUnavailable(str(reply.get("error", "it did not start")))

    def _reply(self, timeout: float) -> dict:
        if not select.select([self.sock], [], [], timeout)[0]:
            raise ZygoteUnavailable(f"no answer in {timeout:g} s")
        data = self.sock.recv(1 << 16)
        if not data:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
            self.errors.seek(0)
            error = self.errors.read()[-300:].decode(errors="replace").strip()
            raise ZygoteUnavailable(f"it ended ({error})")
        return json.loads(data)

    def spawn(self, request: dict, fds: list[int]) -> int:
        """Fork a runner into the sandbox ``request["target"]`` is the init of; its pid (ours)."""
        socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        reply = self._reply(SPAWN_TIMEOUT)
        if not isinstance(reply.get("runner"), int):
            raise ZygoteUnavailable(str(reply.get("error", reply))[:300])
        return reply["runner"]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # it ends (and its CPU time is counted with ours) ...
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        if self.proc.poll() is None:  # ... or is killed with bubblewrap (--die-with-parent)
            self.proc.kill()
        self.proc.wait()
        self.errors.close()
        self.sock.close()


def _enclosure() -> list[str]:
    """bubblewrap's arguments for the zygote's own mount namespace (see above)."""
    host = ["--dev", "/dev", "--bind", "/proc", "/proc", "--bind", "/sys/fs/cgroup", "/sys/fs/cgroup"]
    cmd = [*python_view(host), "--tmpfs", MOUNT_POINT, "--dir", f"{MOUNT_POINT}/.mplconfig"]
    cache = _matplotlib_font_cache()
    if cache is not None:
        cmd += ["--ro-bind", str(cache), f"{MOUNT_POINT}/.mplconfig/{cache.name}"]
    return [
        *cmd,
        "--ro-bind",
        str(PROGRAM.parent),
        HOME,
        "--chdir",
        "/",
        "--die-with-parent",
        "--cap-add",
        "ALL",
    ]


class _Placeholder:
    """The sandbox's ``Popen`` (bubblewrap and its placeholder) with the forked runner's pipes."""

    def __init__(self, proc: subprocess.Popen, stdin, stdout) -> None:
        self._proc, self.stdin, self.stdout, self.stderr = proc, stdin, stdout, None
        self.pid = proc.pid

    @property
    def returncode(self):
        return self._proc.returncode

    def poll(self):
        return self._proc.poll()

    def wait(self, timeout=None):
        return self._proc.wait(timeout)

    def kill(self) -> None:
        self._proc.kill()


_lock = threading.Lock()
_zygotes: dict[str, Zygote | ZygoteUnavailable] = {}
_failures: dict[str, int] = {}
MAX_FAILURES = 3  # a zygote that failed to fork is replaced; after this many, runners start the ordinary way


def _zygote(env: dict[str, str]) -> Zygote:
    """This process's zygote for this environment, started on first use (a failure to start is kept)."""
    key = json.dumps(env, sort_keys=True)
    found = _zygotes.get(key)
    if isinstance(found, Zygote) and not found.alive():
        found = None  # killed from outside: a new one
    if found is None:
        try:
            found = Zygote(env)
        except (OSError, ValueError, ZygoteUnavailable) as exc:
            found = exc if isinstance(exc, ZygoteUnavailable) else ZygoteUnavailable(str(exc))
            log.warning("Notebook runners are started without the pre-imported zygote: %s", found)
        _zygotes[key] = found
    if isinstance(found, ZygoteUnavailable):
        raise found
    return found


def _failed(env: dict[str, str], why: Exception) -> None:
    """A fork failed: that zygote is ended (a late answer must not be read as the next one's)."""
    key = json.dumps(env, sort_keys=True)
    found = _zygotes.pop(key, None)
    if isinstance(found, Zygote):
        found.close()
    _failures[key] = _failures.get(key, 0) + 1
    if _failures[key] >= MAX_FAILURES:
        _zygotes[key] = ZygoteUnavailable(f"{MAX_FAILURES} forks failed, the last: {why}")
        log.warning("Notebook runners are started without the pre-imported zygote: %s", _zygotes[key])


def close_all() -> None:
    """End this process's zygotes (at exit; they also end with this process on their own)."""
    with _lock:
        for found in _zygotes.values():
            if isinstance(found, Zygote):
                found.close()
        _zygotes.clear()


def _only_child(pid: int) -> int:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    if len(children) != 1:
        raise ZygoteUnavailable(f"process {pid} has {len(children)} children, not 1")
    return int(children[0])


def start_runner(sandbox: Sandbox, scratch: Path) -> SandboxedProcess | None:
    """The notebook runner (``nbexec``) forked into a new sandbox on ``scratch``, or None (see above)."""
    if not sandbox.use_bwrap or not sandbox.prefork:
        return None
    env = sandbox.environment(scratch, "")
    zygote_env = {k: v for k, v in env.items() if k != "PE_SANDBOX_ID"}
    life_r, life_w = os.pipe()
    try:
        sandboxed = sandbox.start(
            PLACEHOLDER, scratch, stdin=life_r, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    finally:
        os.close(life_r)
    pipes: list[int] = [life_w]
    try:
        with _lock:
            zygote = _zygote(zygote_env)
            proc = sandboxed.proc
            assert proc.stdout is not None
            LineReader(proc.stdout.fileno(), 64).read_line(_deadline(SPAWN_TIMEOUT))  # set up
            init = _only_child(proc.pid)  # bubblewrap's init in the sandbox's PID namespace
            placeholder = _only_child(init)
            in_r, in_w = os.pipe()
            pipes += [in_r, in_w]
            out_r, out_w = os.pipe()
            pipes += [out_r, out_w]
            group = sandboxed.group
            request = {
                "target": init,
                "parent": proc.pid,
                "group_files": group.procs_files if group is not None else [],
                "rlimits": rlimits(sandbox.limits),
                "env": {**env, "PE_SANDBOX_ID": sandboxed.marker},
                "cwd": MOUNT_POINT,
            }
            try:
                runner = zygote.spawn(request, [in_r, out_w, life_w])
            except (OSError, ValueError, ZygoteUnavailable) as exc:
                _failed(zygote_env, exc)
                raise
    except (OSError, ValueError, ZygoteUnavailable, LineTimeout, LineClosed, LineTooLong) as exc:
        log.warning("Starting this notebook runner the ordinary way: %s", exc)
        for fd in pipes:
            _close(fd)
        sandboxed.kill()
        return None
    for fd in (in_r, out_w, life_w):
        _close(fd)
    proc.stdout.close()
    sandboxed.proc = _Placeholder(proc, os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"))  # type: ignore[assignment]
    sandboxed.roots.update({placeholder: "hold", runner: "nbexec"})
    return sandboxed


def _deadline(seconds: float) -> float:
    import time

    return time.monotonic() + seconds


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


# At exit, so that the zygote's CPU time is counted with its grading process's (a pool's worker process
# leaves through multiprocessing's finalizers, not atexit). It also ends with that process on its own.
atexit.register(close_all)
multiprocessing.util.Finalize(None, close_all, exitpriority=10)

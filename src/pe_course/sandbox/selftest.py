"""The sandbox's self-test on the grading machine (issue 32): a few hostile probes, run the way a
submission's code is run, before this machine grades anything.

Each probe is something a submission must never manage: read a file of the grading user (a canary
written for the test), reach the network (a listener the test opens on the loopback), leave a process
running after its run, and hold more memory across processes than one run's resource group allows.
If one gets through, grading refuses in one line that names it. Passing is remembered per machine, user
and version of this package's sandbox code (``~/.cache/pe-course/sandbox-selftest-*.json``), so the
probes run once, not per student; a Dask worker runs them on its own machine.

Not probed where the instructor opted out: without bubblewrap (``--unisolated``, trusted code) nothing
is, and without a resource group (``--without-resource-groups``, accepted) the memory probe is not.
``pe-course check-sandbox`` runs the probes now and prints what each found.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import secrets
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from . import policy
from .client import StudentProcess
from .groups import mechanism
from .isolation import Sandbox
from .limits import MiB
from .policy import PLATFORMS, IsolationUnavailable

# The probes, as a submission's code: standard library only, as any student could write it.
PROBES = """
import os, socket, subprocess, sys, time

def read_file(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return "blocked: " + type(exc).__name__

def connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        return "connected"
    except OSError as exc:
        return "blocked: " + type(exc).__name__

def leave_process(marker):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return "started"

def hold_memory(children, mib):
    r, w = os.pipe()
    pids = []
    for _ in range(children):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(mib << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(w, b"1")
                time.sleep(4)
            finally:
                os._exit(0)
        pids.append(pid)
    os.close(w)
    held = 0
    while held < children:
        data = os.read(r, 16)
        if not data:
            break
        held += len(data)
    for pid in pids:
        os.waitpid(pid, 0)
    return held
"""
FUNCTIONS = ["read_file", "connect", "leave_process", "hold_memory"]


@dataclass(frozen=True)
class Finding:
    probe: str
    held: bool | None  # None: not probed (the instructor opted out of what it checks)
    detail: str


def _sandbox_code_digest() -> str:
    """What the self-test's result depends on in this package: the sandbox's own code."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for path in sorted(here.rglob("*.py")):  # inside/ included: the scripts that run in the sandbox
        digest.update(path.relative_to(here).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pe-course"


def stamp_path(grouped: bool) -> Path:
    cache = cache_dir()
    key = f"{platform.node()}|{platform.release()}|{os.geteuid()}|{grouped}|{_sandbox_code_digest()}"
    return cache / f"sandbox-selftest-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


@contextlib.contextmanager
def _listener() -> Iterator[tuple[int, list]]:
    """A TCP listener on the loopback; the list fills with every connection it accepted."""
    accepted: list = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.settimeout(0)
        yield server.getsockname()[1], accepted
        with contextlib.suppress(BlockingIOError, OSError):
            while True:
                conn, _ = server.accept()
                accepted.append(conn.getpeername())
                conn.close()


def _strays(marker: str, wait: float = 5.0) -> list[psutil.Process]:
    deadline = time.monotonic() + wait
    while True:
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if marker in (proc.info["cmdline"] or []):
                    found.append(proc)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def run(sandbox: Sandbox | None = None) -> list[Finding]:
    """Run every probe in a sandbox made as for grading; what each found."""
    sandbox = sandbox or Sandbox()
    sandbox.limits = sandbox.limits.scaled(call_timeout=60.0)
    grouped = bool(sandbox.use_groups)
    canary_text = secrets.token_hex(16)
    canary = cache_dir() / f"selftest-canary-{os.getpid()}"
    marker = f"pe-course-selftest-{secrets.token_hex(6)}"
    children = 5
    mib = max(64, sandbox.limits.group_memory // MiB // 4)  # 5 x a quarter: 1.25 x the group's memory
    findings = []
    canary.parent.mkdir(parents=True, exist_ok=True)
    canary.write_text(canary_text)
    try:
        with _listener() as (port, accepted), StudentProcess([PROBES], FUNCTIONS, sandbox=sandbox) as student:
            read = student.call("read_file", str(canary))
            theft = read.ok and read.value == canary_text
            findings.append(Finding("file theft", not theft, f"read {canary}: {_said(read)}"))
            reached = student.call("connect", port)
            student.call("leave_process", marker)
            if grouped:
                held = student.call("hold_memory", children, mib)
                over = held.ok and held.value == children
                detail = f"{children} processes x {mib} MiB (group {sandbox.limits.group_memory // MiB} MiB)"
                findings.append(Finding("memory across processes", not over, f"{detail}: {_said(held)}"))
            else:
                findings.append(Finding("memory across processes", None, "no resource group (accepted)"))
        # the probe's own word, or the listener's (which counts even if the probe said otherwise)
        said = f"127.0.0.1:{port}: {_said(reached)}" + (
            f"; the listener accepted {accepted}" if accepted else ""
        )
        net = (reached.ok and reached.value == "connected") or bool(accepted)
        findings.insert(1, Finding("network", not net, said))
        left = _strays(marker)
        findings.append(
            Finding("a process left running", not left, f"{len(left)} left" if left else "none left")
        )
        for proc in left:
            with contextlib.suppress(psutil.Error):
                proc.kill()
    finally:
        canary.unlink(missing_ok=True)
    return findings


def _said(outcome) -> str:
    if outcome.ok:
        return repr(outcome.value)[:60]
    return f"{outcome.kind} {outcome.message or outcome.error}".strip()[:80]


def check(config=None, unisolated: bool = False, ungrouped: bool = False) -> None:
    """:func:`.policy.check` (bubblewrap and resource groups, or the instructor's opt-outs), then the
    self-test where it applies: what every path that runs student code calls first."""
    policy.check(config, unisolated=unisolated, ungrouped=ungrouped)
    ensure(unisolated or policy.unisolated_allowed(config), grouped=mechanism() is not None)


def ensure(unisolated: bool = False, grouped: bool = True, sandbox: Sandbox | None = None) -> None:
    """Raise :class:`IsolationUnavailable` if a probe gets through on this machine; run the probes only
    when this machine, user and sandbox code have not passed them before."""
    if unisolated:
        return
    stamp = stamp_path(grouped)
    if stamp.exists():
        return
    stamp.parent.mkdir(parents=True, exist_ok=True)
    with open(stamp.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # local workers starting together: one runs the probes
        if stamp.exists():
            return
        findings = run(sandbox or Sandbox(ungrouped=not grouped))
        through = [f for f in findings if f.held is False]
        if through:
            said = "; ".join(f"{f.probe} ({f.detail})" for f in through)
            raise IsolationUnavailable(
                f"Refusing to run student code: the sandbox's self-test got through on this machine: {said} "
                f"(run `pe-course check-sandbox` for every probe; guide: {PLATFORMS})."
            )
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        stamp.write_text(json.dumps({"when": when, "findings": [f.__dict__ for f in findings]}, indent=1))

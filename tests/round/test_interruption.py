"""Interruption holds whatever moment the signal arrives: nothing of a sandbox is left behind (scratch
directory, resource group, process), and the next round goes on.

Two levels, each signalled at many points:

- a local grading worker's own loop of sandboxes (made, called, torn down, as grading does), stopped
  with SIGTERM right after each step starts and a little later, as ``pe-course grade`` stops its workers;
- whole rounds of ``pe-course grade``, interrupted with SIGTERM (``kill``) or Ctrl-C (SIGINT to the
  process group) at moments seen from outside: starting up, the template gradebook made, a sandbox
  made, a sandbox removed, a student merged, ...; then a round that is left alone completes.

Every process runs with its own TMPDIR and (as root, on cgroup v1) in a control group of its own, so
"nothing left" is checked on what these processes made, whatever else runs on the machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from conftest import reference_nb, requires_bwrap

from pe_course.round.resume import GradeState
from pe_course.sandbox import groups

pytestmark = [pytest.mark.slow, requires_bwrap]
PE_COURSE = str(Path(sys.executable).with_name("pe-course"))


class Enclosure:
    """A TMPDIR and, where resource groups are cgroup v1 (as root here), a control group of its own
    for a process and everything it starts: what they leave is found there and nowhere else."""

    def __init__(self, base: Path) -> None:
        self.tmp = base / "tmp"
        self.tmp.mkdir(parents=True)
        mech = groups.mechanism()
        name = f"pe-test-{uuid.uuid4().hex[:8]}"
        self.cgroups = (
            [parent / name for parent in mech.parents.values()] if mech and mech.version == 1 else []
        )
        for path in self.cgroups:
            path.mkdir()

    def env(self) -> dict[str, str]:
        return {**os.environ, "TMPDIR": str(self.tmp), "COLUMNS": "200"}

    def enter(self) -> None:
        """preexec_fn: the child joins the enclosure's control group before it runs anything."""
        groups.join([str(path / "cgroup.procs") for path in self.cgroups])

    def left(self) -> dict[str, list[str]]:
        """What is left: scratch directories, resource groups, processes (with their command lines)."""
        found = {
            "scratch": sorted(p.name for p in self.tmp.glob("pe-sandbox-*")),
            "groups": [],
            "processes": [],
        }
        for path in self.cgroups:
            found["groups"] += sorted(str(p.relative_to(path)) for p in path.rglob("pe-sandbox-*"))
            for procs in path.rglob("cgroup.procs"):
                for pid in procs.read_text().split():
                    found["processes"].append(f"{pid}: {_cmdline(pid)}")
        found["processes"] = sorted(set(found["processes"]))
        return found

    def settle(self, timeout: float = 10.0) -> dict[str, list[str]]:
        """What is left once the last killed processes are reaped (a moment, under load)."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.left()
            if not any(left.values()) or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def close(self) -> None:
        """Leave nothing of the test behind either, even when it failed."""
        for path in reversed(self.cgroups):
            for procs in path.rglob("cgroup.procs"):
                for pid in procs.read_text().split():
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
            for group in [*sorted(path.rglob("pe-sandbox-*"), reverse=True), path]:
                with contextlib.suppress(OSError):
                    group.rmdir()


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


@pytest.fixture
def enclosure(tmp_path):
    made = Enclosure(tmp_path / "enclosure")
    try:
        yield made
    finally:
        made.close()


# --------------------------------------------------------------------------------------------
# A grading worker's sandboxes, stopped at every step
# --------------------------------------------------------------------------------------------
WORKER = textwrap.dedent(
    """
    import os, sys
    from pe_course.runners.local import _worker_start
    from pe_course.steps.execute import _Runner
    from pe_course.sandbox import Sandbox, StudentProcess

    steps = os.fdopen(int(os.environ["STEPS_FD"]), "w", buffering=1)  # stdout goes to /dev/null
    _worker_start()
    sandbox = Sandbox()
    while True:  # what grading a student does with sandboxes, over and over
        steps.write("scoring-worker\\n")
        with StudentProcess(["def f(x):\\n    return x + 1\\n"], ["f"], sandbox) as student:
            steps.write("call\\n")
            student.call("f", 1)
            steps.write("teardown\\n")
        steps.write("notebook-runner\\n")
        runner = _Runner(sandbox, None)
        steps.write("runner-teardown\\n")
        runner.close()
    """
)
STEPS = ("scoring-worker", "call", "teardown", "notebook-runner", "runner-teardown")
DELAYS = (0.0, 0.004, 0.015, 0.05)  # seconds after the step starts


def test_a_worker_stopped_at_any_step_of_a_sandbox_leaves_nothing(enclosure):
    stops = []
    for step in STEPS:
        for delay in DELAYS:
            read, write = os.pipe()
            proc = subprocess.Popen(
                [sys.executable, "-c", WORKER],
                pass_fds=(write,),
                env={**enclosure.env(), "STEPS_FD": str(write)},
                preexec_fn=enclosure.enter,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            os.close(write)
            with os.fdopen(read) as seen:
                seen_twice = step in (
                    "scoring-worker",
                    "notebook-runner",
                )  # the second time: a sandbox was made and removed before
                wanted = 2 if seen_twice and delay else 1
                for line in seen:
                    if line.strip() == step:
                        wanted -= 1
                        if not wanted:
                            break
                else:
                    pytest.fail(f"the worker stopped before {step}: {proc.communicate()[1][-2000:]!r}")
                time.sleep(delay)
                proc.send_signal(signal.SIGTERM)  # what stop_workers() sends
            _, err = proc.communicate(timeout=60)
            stops.append((step, delay))
            assert proc.returncode == 128 + signal.SIGTERM, (step, delay, err[-2000:])
            left = enclosure.settle()
            assert not any(left.values()), f"stopped at {step} + {delay * 1000:g} ms, left: {left}"
    assert len(stops) == len(STEPS) * len(DELAYS)


# --------------------------------------------------------------------------------------------
# Whole rounds, interrupted at many moments
# --------------------------------------------------------------------------------------------
STUDENTS = ("ani", "budi", "citra")


class Round:
    """One `pe-course grade --force --jobs 2` in the enclosure, and the moments seen from outside."""

    def __init__(self, root: Path, enclosure: Enclosure, *extra: str) -> None:
        self.root, self.enclosure = root, enclosure
        self.started = time.monotonic()
        self.seen_scratch: set[str] = set()
        self.state = root / ".pe-course" / "positional-encoding-grade-state.jsonl"
        self.merged_before = self.merges()
        self.proc = subprocess.Popen(
            [PE_COURSE, "grade", "--jobs", "2", *extra],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, as a terminal gives it
            env=enclosure.env(),
            preexec_fn=enclosure.enter,
        )

    def merges(self) -> int:
        try:
            return len(self.state.read_text(encoding="utf-8").splitlines())
        except OSError:
            return 0

    def scratch_made(self) -> bool:
        now = {p.name for p in self.enclosure.tmp.glob("pe-sandbox-*")}
        made = bool(now - self.seen_scratch)
        self.seen_scratch |= now
        return made

    def scratch_removed(self) -> bool:
        now = {p.name for p in self.enclosure.tmp.glob("pe-sandbox-*")}
        removed = bool(self.seen_scratch - now)
        self.seen_scratch |= now
        return removed


def _catches_sigterm(run: Round) -> bool:
    """pe-course has installed its handlers: from here on a signal is an interruption, not a kill."""
    try:
        status = Path(f"/proc/{run.proc.pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def _sandbox_after_a_merge(run: Round) -> bool:
    made = run.scratch_made()
    return made and run.merges() > run.merged_before


MOMENTS = {  # name -> (signal, when to send it)
    "starting up": ("SIGTERM", _catches_sigterm),
    "template gradebook made": (
        "Ctrl-C",
        lambda r: any((r.root / ".pe-course" / "work").glob("*/template.db")),
    ),
    "first sandbox made": ("SIGTERM", lambda r: r.scratch_made()),
    "a sandbox removed": ("Ctrl-C", lambda r: r.scratch_removed()),
    "a second sandbox made": ("SIGTERM", lambda r: r.scratch_made() and len(r.seen_scratch) >= 2),
    "a student merged": ("SIGTERM", lambda r: r.merges() > r.merged_before),
    "two students merged": ("Ctrl-C", lambda r: r.merges() > r.merged_before + 1),
    "a sandbox made after a merge": ("SIGTERM", _sandbox_after_a_merge),
}


def test_a_round_interrupted_at_any_moment_leaves_nothing_and_the_next_round_goes_on(course_copy, enclosure):
    for student in STUDENTS:
        course_copy.submit(student, {"01_embedding": reference_nb("01_embedding")})
    outcomes = {}
    for moment, (how, when) in MOMENTS.items():
        run = Round(course_copy.root, enclosure, "--force")
        deadline = time.monotonic() + 300
        while run.proc.poll() is None and not when(run):
            assert time.monotonic() < deadline, f"{moment} never came"
            time.sleep(0.01)
        if run.proc.poll() is None:
            if how == "SIGTERM":
                run.proc.send_signal(signal.SIGTERM)  # `kill <pid>`: the main process only
            else:
                os.killpg(run.proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        started = time.monotonic()
        out, _ = run.proc.communicate(timeout=120)
        outcomes[moment] = run.proc.returncode
        assert "Traceback" not in out, (moment, out[-3000:])
        if run.proc.returncode != 0:  # (0: the round had just ended when the signal came)
            assert run.proc.returncode == 130 and "Interrupted." in out, (moment, out[-3000:])
            assert time.monotonic() - started < 60, moment
        left = enclosure.settle()
        assert not any(left.values()), f"interrupted at '{moment}' ({how}), left: {left}"
        assert not (course_copy.root / ".pe-course" / "work").exists(), moment
        # never a student recorded as merged that the gradebook lacks
        recorded = set(GradeState(course_copy.course).data)
        assert recorded <= {k[0] for k in course_copy.scores()}, moment
    assert any(code == 130 for code in outcomes.values()), outcomes
    # left alone, the next round goes on from there and completes
    final = Round(course_copy.root, enclosure)
    out, _ = final.proc.communicate(timeout=600)
    assert final.proc.returncode == 0, out[-3000:]
    assert "Graded" in out and "failed 0" in out, out[-3000:]
    assert sorted(GradeState(course_copy.course).data) == sorted(STUDENTS)
    scores = course_copy.scores()
    assert all(scores[(s, "01_embedding", "test_embed")] == 3 for s in STUDENTS), scores
    for student in STUDENTS:
        page = course_copy.root / "feedback" / student / "positional-encoding" / "01_embedding.html"
        assert page.is_file(), student
    assert not any(enclosure.settle().values())


CTRL_C_INSIDE_DEL = """
import os, signal, time
from pe_course.interruption import catch_signals

catch_signals()


class Collected:
    def __del__(self):  # where Python swallows an exception ("Exception ignored in ...")
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100000):
            pass  # the handler runs here


try:
    Collected()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.01)
    print("lost")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_ctrl_c_that_lands_in_a_destructor_is_neither_lost_nor_printed():
    """Seen under load: a Ctrl-C raised inside a weakref callback was swallowed by Python (the round went on
    to the end, exit 0) or printed as a traceback. The signal is sent again and raised where it can be."""
    proc = subprocess.run(
        [sys.executable, "-c", CTRL_C_INSIDE_DEL], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.stdout.strip() == "interrupted", proc.stdout + proc.stderr
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr

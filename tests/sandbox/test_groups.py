"""One submission, one bounded group: memory, processes, CPU and scratch files limited for the whole
sandboxed run, whoever grades (root included), with the figures in the record and the attention list.

Real control groups, real sandboxes (bubblewrap and the fallback), real processes; the memory and number of
the test's own processes are read from /proc while the hostile code runs.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import reference_nb, requires_bwrap, with_code

from pe_course.record.attention import resource_attention as attention
from pe_course.sandbox import Limits, MiB, Sandbox
from pe_course.sandbox.client import StudentProcess
from pe_course.sandbox.groups import mechanism

pytestmark = pytest.mark.skipif(
    mechanism() is None,
    reason=(
        "no usable control group here (needs cgroup v1 memory/pids/cpuacct/freezer writable, e.g. as root, or a "
        "delegated cgroup v2 subtree with memory and pids)"
    ),
)

SMALL = Limits(
    call_timeout=20.0,
    load_timeout=30.0,
    group_memory=512 * MiB,
    group_processes=32,
    group_cpu_seconds=4.0,
    scratch_files=500,
    scratch_bytes=64 * MiB,
)
MODES = [pytest.param(True, id="bwrap", marks=requires_bwrap), pytest.param(False, id="fallback")]

HOSTILE = '''
import os, threading, time, subprocess

def spread_memory(n, hold=3):
    """n processes that each touch 300 MiB and hold it: each under every per-process limit, together over
    the group's. (Held 30 s, the survivors kept the test waiting for the 20 s call time-out; the group's
    kills come as the second process fills its 300 MiB, well within 3 s.)"""
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            block = bytearray(300 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(hold)
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    return n

def thread_flood(n):
    started = 0
    try:
        for _ in range(n):
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            started += 1
    except RuntimeError:
        pass
    return started

def many_files(n):
    for i in range(n):
        with open(f"f{i}", "w") as f:
            f.write("x")
    time.sleep(2)
    return n

def burn_cpu(n):
    for _ in range(n - 1):
        if os.fork() == 0:
            while True:
                pass
    while True:
        pass

def honest(x):
    return x + 1
'''


class TreeWatch:
    """Samples the memory (proportional set size) and the number of this test's processes — every
    descendant of this one — while hostile code runs. A group's processes cannot leave the tree: in
    bubblewrap an orphan goes to the sandbox's own init, and the fallback's run forks no daemons here. What
    other tests beside this one use (pytest-xdist's other worker) does not count, as it would in the
    machine's figures."""

    def __init__(self) -> None:
        self._mine: set[int] = {os.getpid()}
        self._seen: set[int] = set()
        self.base_memory, self.base_procs = self._sample()
        self.peak_memory, self.peak_procs = self.base_memory, self.base_procs
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> tuple[int, int]:
        live = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
        for pid in sorted(live - self._seen):  # a parent's pid is usually the smaller
            self._seen.add(pid)
            try:
                parent = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent in self._mine:
                self._mine.add(pid)
        self._mine &= live | {os.getpid()}
        self._seen &= live
        memory = 0
        for pid in self._mine - {os.getpid()}:
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        memory += int(line.split()[1]) * 1024
            except (OSError, ValueError):
                continue
        return memory, len(self._mine) - 1

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            memory, procs = self._sample()
            self.peak_memory, self.peak_procs = max(self.peak_memory, memory), max(self.peak_procs, procs)

    def __enter__(self) -> TreeWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run(use_bwrap: bool, fn: str, arg: int, limits: Limits = SMALL):
    with (
        TreeWatch() as machine,
        StudentProcess([HOSTILE], [fn, "honest"], Sandbox(limits, use_bwrap=use_bwrap)) as sp,
    ):
        out = sp.call(fn, arg)
        after = sp.call("honest", 1)
    return out, after, sp.report.usage, machine


@pytest.mark.parametrize("use_bwrap", MODES)
def test_memory_spread_over_processes_is_bounded_for_the_group(use_bwrap):
    out, after, usage, machine = run(use_bwrap, "spread_memory", 4)
    assert out.kind == "limit" and out.message == "batas memori 512 MiB terlampaui", out
    assert "memory" in usage.hits and usage.peak_memory <= SMALL.group_memory
    assert machine.peak_memory - machine.base_memory < SMALL.group_memory + 256 * MiB, (
        "the group limit did not hold"
    )
    assert after.kind == "value" and after.value == 2, "the next call runs in a fresh worker"


@requires_bwrap
def test_the_watch_sees_memory_that_no_group_bounds():
    """The witness of the test above can fail: without a resource group (per-process limits only), four
    processes of 300 MiB are seen together."""
    with (
        TreeWatch() as machine,
        StudentProcess([HOSTILE], ["spread_memory"], Sandbox(SMALL, use_groups=False)) as sp,
    ):
        out = sp.call("spread_memory", 4, 2)
    assert out.kind == "value" and out.value == 4, out
    assert machine.peak_memory - machine.base_memory > 4 * 300 * MiB * 0.9
    assert machine.peak_procs - machine.base_procs >= 4


@pytest.mark.parametrize("use_bwrap", MODES)
def test_thread_flood_is_bounded_for_the_group(use_bwrap):
    out, after, usage, machine = run(use_bwrap, "thread_flood", 500)
    assert out.kind == "limit" and "terlalu banyak proses atau thread (batas 32)" in out.message, out
    assert usage.peak_processes <= SMALL.group_processes and "processes" in usage.hits
    assert machine.peak_procs - machine.base_procs < 2 * SMALL.group_processes
    assert after.kind == "value"


@pytest.mark.parametrize("use_bwrap", MODES)
def test_many_small_files_in_scratch_end_the_run(use_bwrap):
    out, after, usage, _ = run(use_bwrap, "many_files", 5000)
    assert out.kind == "limit" and "terlalu banyak berkas" in out.message, out
    assert "disk" in usage.hits and after.kind == "value"


@pytest.mark.parametrize("use_bwrap", MODES)
def test_cpu_time_of_the_whole_group_is_bounded(use_bwrap):
    started = time.monotonic()
    out, after, usage, _ = run(use_bwrap, "burn_cpu", 3)
    assert out.kind == "limit" and "batas waktu CPU 4 detik" in out.message, out
    assert time.monotonic() - started < SMALL.call_timeout, "ended by the CPU limit, not by the wall clock"
    assert usage.cpu_seconds >= SMALL.group_cpu_seconds and after.kind == "value"


@requires_bwrap
def test_a_cell_over_a_limit_costs_only_that_cell():
    cells = [
        "import os\nfor i in range(2000):\n    open(f'f{i}', 'w').close()\n",
        "def honest(x):\n    return x + 1\n",
    ]
    with StudentProcess(cells, ["honest"], Sandbox(SMALL)) as sp:
        assert sp.call("honest", 1).value == 2
    assert [e["index"] for e in sp.report.cell_errors] == [0]
    assert sp.report.cell_errors[0]["error"] == "BatasSumberDaya"
    assert "terlalu banyak berkas" in sp.report.cell_errors[0]["message"]


@requires_bwrap
def test_honest_run_is_measured_and_not_flagged():
    with StudentProcess([HOSTILE], ["honest"], Sandbox(Limits())) as sp:
        assert sp.call("honest", 1).value == 2
    usage = sp.report.usage
    assert 0 < usage.peak_memory < Limits().group_memory / 4 and 0 < usage.peak_processes < 16
    assert usage.cpu_seconds > 0 and usage.hits == []
    assert attention({"score": usage.to_dict(Limits().group_memory, 64, 300.0)}) == []


def test_attention_names_hits_and_near_misses_with_figures():
    near = {
        "peak_memory": 1900 * MiB,
        "memory_limit": 2048 * MiB,
        "peak_processes": 5,
        "process_limit": 64,
        "cpu_seconds": 1.0,
        "cpu_limit": 300,
        "hits": [],
    }
    over = {**near, "peak_memory": 2048 * MiB, "hits": ["memory"]}
    assert attention({"execute": near}) == [
        (
            "resource-near",
            "execute: close to the memory limit (peak memory "
            "1.86 GiB of 2.00 GiB, peak 5 of 64 processes/threads, 1.0 of 300 CPU "
            "seconds)",
        )
    ]
    assert (
        attention({"score": over})[0][0] == "resource-limit"
        and "over the memory limit" in attention({"score": over})[0][1]
    )
    assert attention("not a dict") == [] and attention({"score": {"hits": "x"}}) == []


# -- the issue's round: two hostile submissions graded at once ---------------------------------------
PREAMBLE_MEMORY = """
import os as _os, time as _time
for _ in range(4):
    if _os.fork() == 0:
        _b = bytearray(500 << 20)
        for _i in range(0, len(_b), 4096):
            _b[_i] = 1
        _time.sleep(20)
        _os._exit(0)
"""
PREAMBLE_FORKS = """
import subprocess as _sp
try:
    for _ in range(400):
        _sp.Popen(["sleep", "20.417"])
except OSError:
    pass
"""


@pytest.mark.slow
@requires_bwrap
def test_two_hostile_submissions_graded_at_once_stay_in_their_groups(course_copy):
    from pe_course.round.grade import grade_round
    from pe_course.runners.local import LocalRunner

    config = course_copy.root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.ResourceGroups.memory_mib = 768\n")
    embed_cell = next(
        c.source
        for c in reference_nb("01_embedding").cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "solution_embed"
    )
    for student, preamble in (("hog", PREAMBLE_MEMORY), ("forker", PREAMBLE_FORKS)):
        course_copy.submit(
            student,
            {
                "01_embedding": with_code(
                    reference_nb("01_embedding"), "embed", textwrap.dedent(preamble) + embed_cell
                )
            },
        )
    course_copy.submit("honest", {"01_embedding": reference_nb("01_embedding")})
    with TreeWatch() as machine:
        summary = grade_round(course_copy.course, LocalRunner(2))
    assert sorted(summary.graded) == ["forker", "hog", "honest"]
    assert machine.peak_memory - machine.base_memory < 2 * 768 * MiB + 1024 * MiB  # two groups + the graders
    assert machine.peak_procs - machine.base_procs < 2 * 64 + 60  # two groups + the graders' own processes
    scores = course_copy.scores()
    assert scores[("honest", "01_embedding", "test_embed")] == 3
    for student in ("hog", "forker"):
        reasons = " ".join(summary.attention.get(student, []))
        assert "limit" in reasons and "peak" in reasons, (student, summary.attention)
        record = course_copy.record(student, "01_embedding")
        assert record["resources"]["score"]["hits"] or record["resources"]["execute"]["hits"]
    time.sleep(0.5)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p) == b"sleep\x0020.417\x00"]
    assert left == [], "processes left running"
    from pe_course.report import collect

    issues = {(i.student, i.kind) for i in collect(course_copy.course).issues}
    assert {("hog", "resource-limit"), ("forker", "resource-limit")} <= issues
    assert not any(student == "honest" and kind.startswith("resource") for student, kind in issues)


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


@requires_bwrap
def test_processes_left_running_by_the_cells_are_shown_and_ended():
    cells = ["import subprocess\n_bg = subprocess.Popen(['sleep', '30.731'])\n", HOSTILE]
    with StudentProcess(cells, ["honest"], Sandbox(SMALL)) as sp:
        assert sp.call("honest", 1).value == 2
    assert "background" in sp.report.usage.hits
    assert [kind for kind, _ in attention({"score": sp.report.usage.to_dict(1, 1, 1.0)})][:1] == [
        "resource-limit"
    ]
    time.sleep(0.3)
    assert not [
        p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p) == b"sleep\x0030.731\x00"
    ]


def test_groups_left_by_a_killed_grader_are_swept():
    from pe_course.sandbox.leftovers import Place, sweep_stale

    mech = mechanism()
    parent = next(iter(mech.parents.values()))
    stale, fresh = parent / "pe-sandbox-stale-test", parent / "pe-sandbox-fresh-test"
    stale.mkdir()
    fresh.mkdir()
    try:
        os.utime(stale, (time.time() - 3600, time.time() - 3600))
        sweep_stale(Place(mech.version, {"only": parent}))
        assert not stale.exists(), "an empty, old group is removed"
        assert fresh.exists(), "a group that may still be set up is kept"
    finally:
        for path in (stale, fresh):
            if path.exists():
                path.rmdir()


def test_what_a_grader_killed_outright_left_is_removed_and_a_running_graders_is_kept(tmp_path):
    """`pe-course grade` (and a Dask worker) starts with sweep_left_behind: the scratch directories and
    groups of a grader that was killed outright go, with the processes still in its groups; a running
    grader's stay, even a group that is empty for the moment and a scratch directory it has not used yet."""
    import signal
    import subprocess

    from pe_course.sandbox.scratch import sweep_left_behind
    from pe_course.sandbox.teardown import PREFIX

    dead = subprocess.Popen(["true"])  # its pid is free again once it is reaped
    dead.wait()
    zombie = subprocess.Popen(["true"])  # ended, not reaped yet (as a killed worker until init reaps it)
    while Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
        time.sleep(0.01)
    zombie_name = f"{PREFIX}{zombie.pid}-test"
    mech = mechanism()
    parents = list(mech.parents.values())
    killed_name, running_name = f"{PREFIX}{dead.pid}-test", f"{PREFIX}{os.getpid()}-test"
    orphan = subprocess.Popen(["sleep", "300"], start_new_session=True)  # a sandbox its grader left
    made = [parent / name for parent in parents for name in (killed_name, running_name)]
    scratch = {name: tmp_path / name for name in (killed_name, zombie_name, running_name)}
    try:
        for path in made:
            path.mkdir()
        for parent in parents:
            (parent / killed_name / "cgroup.procs").write_text(str(orphan.pid))
        for path in scratch.values():
            (path / "locked").mkdir(parents=True)
            (path / "locked").chmod(0)
        sweep_left_behind(str(tmp_path))
        assert orphan.wait(timeout=10) == -signal.SIGKILL, "the killed grader's sandbox process was ended"
        assert not any((parent / killed_name).exists() for parent in parents)
        assert not scratch[killed_name].exists() and not scratch[zombie_name].exists()
        assert all((parent / running_name).exists() for parent in parents), "a running grader's empty group"
        assert scratch[running_name].exists(), "a running grader's scratch directory"
    finally:
        orphan.kill()
        zombie.wait()
        for path in reversed(made):
            if path.exists():
                path.rmdir()


KILLED_GRADER = textwrap.dedent(
    """
    import subprocess, time
    from pe_course.sandbox.groups import ResourceGroup, join, mechanism

    group = ResourceGroup(mechanism(), memory=256 << 20, processes=16, cpu_seconds=600)
    sandboxed = subprocess.Popen(["sleep", "300"], preexec_fn=lambda: join(group.procs_files))
    print(sandboxed.pid, group.dirs["memory"], flush=True)
    time.sleep(300)
    """
)


def _running(pid: int) -> bool:
    try:  # "pid (comm) S …": a zombie or a dead process does not run
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_groups_a_grader_killed_in_another_session_left_are_found_by_the_next(tmp_path):
    """A grader makes its groups where it runs itself (as root on cgroup v1: its own group, which differs
    between login sessions), so one killed outright in one session leaves them where a grader in another
    session makes none. The killed grader recorded the place in the temporary directory before its
    first group; the next grader reads it there, ends the process left in the group and removes the group
    (and forgets the place once it is gone, and a note half-written by a grader killed meanwhile)."""
    import signal
    import subprocess
    import sys
    import uuid

    from pe_course.sandbox import leftovers
    from pe_course.sandbox.groupfs import end_group
    from pe_course.sandbox.groups import join
    from pe_course.sandbox.scratch import sweep_left_behind

    mech = mechanism()
    if mech.version != 1:
        pytest.skip("a session's group of its own is made here on cgroup v1 (v2 keeps processes in leaves)")
    name = f"pe-test-session-{uuid.uuid4().hex[:8]}"
    session = {key: parent / name for key, parent in mech.parents.items()}
    tmp, elsewhere = tmp_path / "tmp", tmp_path / "elsewhere"
    tmp.mkdir()
    elsewhere.mkdir()
    for path in session.values():
        path.mkdir()
    grader = subprocess.Popen(
        [sys.executable, "-c", KILLED_GRADER],
        env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: join([str(path / "cgroup.procs") for path in session.values()]),
    )
    sandboxed = 0
    try:
        pid, group = grader.stdout.readline().split()
        sandboxed = int(pid)
        assert Path(group).parent == session["memory"], "the grader made its group in its session's group"
        grader.kill()
        grader.wait()
        notes = tmp / f"{leftovers.RECORD}{os.getuid()}"
        (notes / f".{Path(group).name}.{grader.pid}").write_text("{")  # as if killed while writing a note
        sweep_left_behind(str(elsewhere))  # a grader that has no record of the session's place
        assert Path(group).exists() and _running(sandboxed)
        sweep_left_behind(str(tmp))
        deadline = time.monotonic() + 10
        while _running(sandboxed) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(sandboxed), "the process left in the killed grader's group was ended"
        assert not any((path / Path(group).name).exists() for path in session.values())
        for path in session.values():
            path.rmdir()
        leftovers.places(mech, str(tmp))
        assert not list(notes.iterdir()), "a place gone is forgotten, and a note half-made by a killed writer"
    finally:
        grader.kill()
        grader.wait()
        if sandboxed and _running(sandboxed):
            os.kill(sandboxed, signal.SIGKILL)
        # where the test failed before the sweep: the group (its directory in every hierarchy), then the session
        for left in {p.name for path in session.values() for p in path.glob("pe-sandbox-*")}:
            end_group(mech.version, {key: path / left for key, path in session.items()})
        for path in session.values():
            if path.exists():
                path.rmdir()


def test_a_note_of_a_folder_outside_the_control_groups_is_not_followed(tmp_path):
    """A note names where groups are; the sweep kills the pids in each left group's ``cgroup.procs``. In a
    real group only the kernel writes that file, so a note of any other folder (planted by code that runs as
    the grader's user, e.g. without bubblewrap) is dropped unread, and the process it names lives on."""
    import json
    import subprocess

    from pe_course.sandbox import leftovers
    from pe_course.sandbox.scratch import sweep_left_behind

    dead = subprocess.Popen(["true"])
    dead.wait()
    victim = subprocess.Popen(["sleep", "300"])
    try:
        fake = tmp_path / "elsewhere" / f"pe-sandbox-{dead.pid}-planted"
        fake.mkdir(parents=True)
        (fake / "cgroup.procs").write_text(str(victim.pid))
        notes = tmp_path / f"{leftovers.RECORD}{os.geteuid()}"
        notes.mkdir(mode=0o700)
        (notes / "planted").write_text(json.dumps({"version": 1, "parents": {"pids": str(fake.parent)}}))
        sweep_left_behind(str(tmp_path))
        assert victim.poll() is None, "the process a planted note named was not killed"
        assert fake.exists() and not list(notes.iterdir())
    finally:
        victim.kill()
        victim.wait()


def test_a_process_joining_while_the_group_is_removed_is_ended_with_it():
    """A stop signal can end a run while the zygote's fork is on its way into the group: the kill finds the
    group empty and the fork joins after it. Seen in a full-suite run at load 5 (test_interruption, stopped
    at notebook-runner + 50 ms): the kill had frozen the empty group (cgroup v1) and never thawed it, so the
    fork stopped there for good and the group could not be removed."""
    import signal
    import subprocess

    from pe_course.sandbox.groups import ResourceGroup, join

    group = ResourceGroup(mechanism(), memory=256 * MiB, processes=16, cpu_seconds=10)
    try:
        group.kill()  # nothing in it yet
        if "freezer" in group.dirs:
            assert (group.dirs["freezer"] / "freezer.state").read_text().strip() == "THAWED"
        late = subprocess.Popen(["sleep", "300"], preexec_fn=lambda: join(group.procs_files))
        assert late.pid in group.pids()
        time.sleep(0.2)
        assert Path(f"/proc/{late.pid}/stat").read_text().rpartition(")")[2].split()[0] != "D", "left frozen"
        group.remove()
        assert late.wait(timeout=10) == -signal.SIGKILL
        assert not any(path.exists() for path in group.dirs.values())
    finally:
        group.remove()

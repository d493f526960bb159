"""Notebook runners forked pre-imported into their sandboxes (sandbox/inside/zygote.py, sandbox/prefork.py).

The fork must be indistinguishable, from inside, from a runner and kernel bubblewrap started afresh —
same user, capabilities (none), namespaces, mounts, environment, limits, resource group, interpreter
state — and must carry nothing from one student to the next.
"""

from __future__ import annotations

import json
import logging
import os
import textwrap

import nbformat
import pytest
from conftest import requires_bwrap

from pe_course.sandbox import Sandbox, prefork
from pe_course.steps.execute import _Runner

pytestmark = requires_bwrap

LOOK = r"""
import os, sys, json, random
import numpy, matplotlib
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
info = {k: st[k].strip() for k in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                   "NoNewPrivs", "Seccomp")}
info["namespaces"] = {n: os.readlink(f"/proc/self/ns/{n}") != os.readlink(f"/proc/1/ns/{n}")
                      for n in os.listdir("/proc/self/ns")}
info["mounts"] = [" ".join(m.split()[1:4]) for m in open("/proc/self/mounts").read().splitlines()]
info["root"] = sorted(os.listdir("/"))
info["cwd"] = os.getcwd()
info["env"] = {k: v for k, v in os.environ.items() if k not in ("PE_SANDBOX_ID", "JPY_PARENT_PID")}
info["path"] = sys.path
info["argv0"] = sys.argv[0]
info["flags"] = str(sys.flags)
info["hash"] = hash("positional")
info["limits"] = open("/proc/self/limits").read().splitlines()[1:]
info["cgroup"] = open("/proc/self/cgroup").read()
info["matplotlib"] = [matplotlib.get_backend(), matplotlib.get_configdir(), matplotlib.get_cachedir()]
info["processes"] = {p: open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")[0].decode()
                     for p in os.listdir("/proc") if p.isdigit()}
info["parent"] = open(f"/proc/{os.getppid()}/cmdline", "rb").read().replace(b"\0", b" ").decode()
info["random"] = [random.random(), float(numpy.random.rand())]
try:  # the interpreter it runs, as its owner (the sandbox's user is root on the host when grading as root)
    os.chmod("/proc/self/exe", os.stat("/proc/self/exe").st_mode & 0o7777)
    info["exe"] = "changed"
except OSError as exc:
    info["exe"] = exc.strerror
print(json.dumps(info))
"""


def _run(sandbox: Sandbox, key, *cells: str):
    """Run the cells as one student's notebook; (outputs' text per cell, problem, runner)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(c)) for c in cells]
    runner = _Runner(sandbox, key)
    try:
        executed, problem = runner.run(nb, 30, 60, {})
    finally:
        runner.close()
    assert executed is not None, problem
    texts = [
        "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream") for c in executed.cells
    ]
    errors = [o for c in executed.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    return texts, problem, runner


def test_a_forked_kernel_sees_exactly_what_a_freshly_started_one_sees():
    (plain,), _, _ = _run(Sandbox(prefork=False), "plain", LOOK)
    (forked,), _, runner = _run(Sandbox(), "forked", LOOK)
    plain, forked = json.loads(plain), json.loads(forked)
    assert "zygote.py" in forked["parent"] and "nbexec.py" in plain["parent"]  # each is what it says
    assert forked.pop("random") != plain.pop("random")
    # no capability at all (bubblewrap's own program keeps its bounding set; the fork drops it too)
    assert forked.pop("CapBnd") == "0000000000000000"
    plain.pop("CapBnd")
    for caps in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(forked[caps], 16) == 0
    assert forked["NoNewPrivs"] == "1"
    # the same processes but one: bubblewrap's init, the runner, the kernel; the fork adds the placeholder
    plain_processes, forked_processes = plain.pop("processes"), forked.pop("processes")
    assert len(forked_processes) == len(plain_processes) + 1
    assert sorted(forked_processes.values()).count("cat") == 1
    plain.pop("parent"), forked.pop("parent")
    assert forked["exe"] == "Read-only file system"
    assert forked == plain
    assert (
        runner.usage is not None and runner.usage.hits == []
    )  # the runner, kernel and placeholder are its own


def test_nothing_of_one_student_reaches_the_next():
    """The first student changes modules, matplotlib, files and leaves a process running; the next
    student's kernel, forked from the same zygote, finds none of it."""
    sandbox = Sandbox()
    first, problem, runner = _run(
        sandbox,
        "first",
        """
        import numpy, matplotlib, subprocess
        numpy.pi = 3
        matplotlib.rcParams["lines.linewidth"] = 9
        open("/tmp/left-by-first", "w").write("x")
        subprocess.Popen(["sleep", "30"], start_new_session=True)
        print(numpy.random.rand())
        """,
    )
    assert runner.usage is not None and "background" in runner.usage.hits  # still seen as the student's
    second, problem, runner = _run(
        sandbox,
        "second",
        """
        import numpy, matplotlib, os
        print(numpy.pi, matplotlib.rcParams["lines.linewidth"], os.path.exists("/tmp/left-by-first"),
              [p for p in os.listdir("/proc") if p.isdigit() and open(f"/proc/{p}/cmdline", "rb").read().startswith(b"sleep")])
        print(numpy.random.rand())
        """,
    )
    assert problem is None and runner.usage is not None and runner.usage.hits == []
    looked, drawn = second[0].splitlines()
    assert looked == "3.141592653589793 1.5 False []"
    assert drawn != first[0].strip()


def test_a_student_who_kills_every_process_it_sees_does_not_stop_the_next():
    """The zygote is outside the sandbox's PID namespace: a kernel that kills everything it can see
    ends only its own sandbox."""
    sandbox = Sandbox()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os, signal\n"
            "for p in sorted((int(p) for p in os.listdir('/proc') if p.isdigit()), reverse=True):\n"
            "    if p != os.getpid():\n"
            "        try: os.kill(p, signal.SIGKILL)\n"
            "        except OSError: pass\n"
        )
    ]
    runner = _Runner(sandbox, "killer")
    try:
        _, problem = runner.run(nb, 10, 30, {})
    finally:
        runner.close()
    assert problem is not None  # its runner died with it
    zygotes = [z for z in prefork._zygotes.values() if isinstance(z, prefork.Zygote)]
    assert zygotes and all(z.alive() for z in zygotes)
    texts, problem, _ = _run(sandbox, "next", "print(6 * 7)")
    assert texts == ["42\n"] and problem is None


def test_without_a_zygote_the_runner_starts_the_ordinary_way(monkeypatch, tmp_path, caplog):
    """A zygote that cannot start (here: its program fails at once) leaves grading as it was, slower."""
    broken = tmp_path / "zygote.py"
    broken.write_text("import sys\nsys.exit('no imports for you')\n")
    monkeypatch.setattr(prefork, "PROGRAM", broken)
    monkeypatch.setattr(prefork, "_zygotes", {})
    with caplog.at_level(logging.WARNING, logger="pe_course.sandbox.prefork"):
        (look,), problem, runner = _run(Sandbox(), "alone", LOOK)
    assert "nbexec.py" in json.loads(look)["parent"] and problem is None
    assert "without the pre-imported zygote" in caplog.text and "no imports for you" in caplog.text
    assert runner.usage is not None and runner.usage.hits == []


def test_a_fork_that_fails_ends_its_zygote_and_the_next_runner_gets_a_new_one(tmp_path):
    """A failed fork (here: asked to join a process that is not a sandbox's) ends that zygote, so a
    late answer of it can never be read as another runner's; the next runner is forked by a new one."""
    sandbox = Sandbox()
    env = {k: v for k, v in sandbox.environment(tmp_path, "").items() if k != "PE_SANDBOX_ID"}
    zygote = prefork._zygote(env)
    pipes = [fd for pair in (os.pipe(), os.pipe()) for fd in pair]
    request = {"target": 1, "parent": -1, "group_files": [], "rlimits": [], "env": env, "cwd": "/sandbox"}
    try:
        with pytest.raises(prefork.ZygoteUnavailable, match="not bubblewrap's"):
            zygote.spawn(request, pipes[:3])
    finally:
        for fd in pipes:
            os.close(fd)
    prefork._failed(env, RuntimeError("test"))
    assert not zygote.alive()
    (look,), problem, _ = _run(sandbox, "after", LOOK)
    assert "zygote.py" in json.loads(look)["parent"] and problem is None
    assert prefork._zygote(env).alive()


def test_the_first_cells_output_is_never_lost():
    """The runner starts a notebook as soon as its kernel answers and IOPub carries a message, without
    jupyter_client's wait for 0.2 s of silence there (sandbox/inside/nbexec.py's _ready): the first cell's
    output still arrives, every time."""
    sandbox = Sandbox()
    for i in range(5):
        texts, problem, _ = _run(sandbox, f"first-output-{i}", f"print({i})", "print('next')")
        assert texts == [f"{i}\n", "next\n"] and problem is None

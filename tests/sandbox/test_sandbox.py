"""Adversarial tests of the sandboxed worker: ``pe_course.sandbox.client.StudentProcess`` with small cells.

Every test that makes sense without bubblewrap runs in both modes: ``Sandbox(use_bwrap=True)``
(skipped when bwrap does not work here) and the rlimits-only fallback ``Sandbox(use_bwrap=False)``.
Isolation promises that only bubblewrap makes (no course files, no network, read-only Python,
private /tmp, a grader that cannot be signalled) are tested with bubblewrap only.

Nothing here looks at other sessions' sandboxes: processes and scratch directories are identified by
this test's own markers (``PE_SANDBOX_ID`` of the processes it started, unique tokens, the
``StudentProcess``'s own scratch path).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import GRADERS, REPO, requires_bwrap

from pe_course.engine import CheckFailed, Grader, assert_close
from pe_course.public_checks import Clause
from pe_course.sandbox import Limits, MiB, Sandbox
from pe_course.sandbox import isolation as sandbox_module
from pe_course.sandbox.client import StudentProcess
from pe_course.sandbox.groups import mechanism
from pe_course.sandbox.inside import codec


def _has_cap_sys_resource() -> bool:
    """Whether this process may raise hard rlimits (CAP_SYS_RESOURCE, bit 24 of CapEff)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> 24 & 1)
    return False


LIMITS = Limits(call_timeout=2.0, load_timeout=30.0, cpu_seconds=60, address_space=1024 * MiB)
MODES = [pytest.param(True, id="bwrap", marks=requires_bwrap), pytest.param(False, id="fallback")]


@pytest.fixture(params=MODES)
def sandbox(request) -> Sandbox:
    return Sandbox(LIMITS, use_bwrap=request.param)


@pytest.fixture
def bwrap_sandbox() -> Sandbox:
    if sandbox_module.bwrap_path() is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    return Sandbox(LIMITS, use_bwrap=True)


def student(sandbox: Sandbox, cells, functions) -> StudentProcess:
    cells = [cells] if isinstance(cells, str) else list(cells)
    return StudentProcess([textwrap.dedent(c) for c in cells], list(functions), sandbox)


def processes_with(needle: bytes, where: str = "cmdline") -> list[int]:
    """Pids whose /proc/<pid>/<where> contains ``needle`` (a unique token of this test)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            data = (entry / where).read_bytes()
        except OSError:
            continue
        if needle in (data.split(b"\0") if where == "environ" else [data]) or (
            where == "cmdline" and needle in data
        ):
            found.append(int(entry.name))
    return found


def wait_gone(needle: bytes, where: str = "cmdline", seconds: float = 3.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while True:
        left = processes_with(needle, where)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_all(pids) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# Values and exceptions
# --------------------------------------------------------------------------------------------
PLAIN_VALUES = [
    0,
    -7,
    2**62,
    1.5,
    -0.0,
    float("inf"),
    float("-inf"),
    True,
    False,
    None,
    "teks ✓",
    [1, 2.5, None],
    (1, (2.0, "x")),
    [],
    np.arange(6.0).reshape(2, 3),
    np.arange(5, dtype=np.int32),
    np.array([True, False]),
    np.zeros((0, 3)),
    np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    np.eye(3)[:, ::2],
    (np.ones(2), np.zeros((2, 2))),
]


@pytest.mark.parametrize("use_bwrap", MODES)
def test_plain_values_round_trip(use_bwrap):
    sb = Sandbox(LIMITS, use_bwrap=use_bwrap)
    with student(sb, "def echo(x):\n    return x\n", ["echo"]) as sp:
        assert sp.report.functions == {"echo": "ok"}
        for value in PLAIN_VALUES:
            out = sp.call("echo", value)
            assert out.kind == "value", (value, out)
            if isinstance(value, np.ndarray):
                assert type(out.value) is np.ndarray
                assert out.value.dtype == value.dtype and out.value.shape == value.shape
                np.testing.assert_array_equal(out.value, value)
            elif isinstance(value, tuple):
                assert type(out.value) is tuple and len(out.value) == len(value)
            else:
                assert type(out.value) is type(value) and out.value == value


@pytest.mark.parametrize("use_bwrap", MODES)
def test_data_files_sit_beside_the_code_and_come_back_after_a_restart(use_bwrap):
    """The assignment's data files are in the worker's working directory at load time (a setup cell
    reads them there, as beside the notebook), read-only, and fresh after the student's code replaced
    them and the worker was restarted."""
    cells = [
        "import numpy as np\nwith np.load('tabel.npz', allow_pickle=False) as f:\n    TABLE = f['t']\n",
        "import os\n\ndef total():\n    return float(open('tabel.npz', 'rb').read().count(b'PK') and TABLE.sum())\n\n"
        "def replace_and_die():\n    os.remove('tabel.npz')\n    open('tabel.npz', 'wb').write(b'palsu')\n    os._exit(1)\n",
    ]
    buf = io.BytesIO()
    np.savez(buf, t=np.arange(4.0))
    sb = Sandbox(LIMITS, use_bwrap=use_bwrap)
    with StudentProcess(cells, ["total", "replace_and_die"], sb, files={"tabel.npz": buf.getvalue()}) as sp:
        assert sp.report.cell_errors == [] and sp.call("total").value == 6.0
        assert sp._scratch is not None and (sp._scratch / "tabel.npz").stat().st_mode & 0o777 == 0o444
        assert sp.call("replace_and_die").kind == "crashed"
        assert sp.call("total").value == 6.0  # a new worker, the data written afresh
    with pytest.raises(ValueError, match="not a data file name"):
        StudentProcess(cells, ["total"], sb, files={"worker.py": b""})


def test_numpy_scalars_and_0d_arrays_round_trip():
    """np.float64 / np.int64 results and arguments, and 0-d arrays, keep their type and shape."""
    sb = Sandbox(LIMITS, use_bwrap=False)
    cells = """
        import numpy as np
        def echo(x):
            return x
        def half(x):
            return np.float64(x) / 2
        def zero_d():
            return np.array(2.5)
    """
    with student(sb, cells, ["echo", "half", "zero_d"]) as sp:
        for value in (np.float64(1.25), np.int64(5), np.float32(0.5), np.bool_(True)):
            out = sp.call("echo", value)
            assert out.kind == "value", (value, out)
            assert type(out.value) is type(value) and out.value == value
        out = sp.call("half", 3)
        assert out.kind == "value" and type(out.value) is np.float64 and out.value == 1.5
        out = sp.call("zero_d")
        assert out.kind == "value" and isinstance(out.value, np.ndarray) and out.value.shape == ()
    for value in (np.float64(1.25), np.array(3.0), np.int8(-3)):
        back = codec.decode_untrusted(json.loads(codec.dumps(codec.encode(value))))
        assert type(back) is type(value) and np.shape(back) == np.shape(value) and back == value


def test_exceptions_are_reported_by_class_name(sandbox):
    cells = """
        class RahasiaError(Exception):
            pass
        def value_error(x):
            raise ValueError("x terlalu besar: " + "y" * 5000)
        def custom(x):
            raise RahasiaError("rahasia")
        def key_error(x):
            return {}[x]
        def not_implemented(x):
            raise NotImplementedError()
    """
    with student(sandbox, cells, ["value_error", "custom", "key_error", "not_implemented"]) as sp:
        out = sp.call("value_error", 1)
        assert (out.kind, out.error) == ("raised", "ValueError")
        assert len(out.message) <= 600
        assert (sp.call("custom", 1).kind, sp.call("custom", 1).error) == ("raised", "RahasiaError")
        assert sp.call("key_error", "k").error == "KeyError"
        assert sp.call("not_implemented", 0).error == "NotImplementedError"


# --------------------------------------------------------------------------------------------
# Hangs, crashes, resource exhaustion
# --------------------------------------------------------------------------------------------
def test_infinite_loop_times_out_within_call_timeout(sandbox):
    cells = """
        def spin(x):
            while True:
                pass
        def sleepy(x):
            import time
            time.sleep(3600)
        def ok(x):
            return x + 1
    """
    with student(sandbox, cells, ["spin", "sleepy", "ok"]) as sp:
        for fn in ("spin", "sleepy"):
            started = time.monotonic()
            out = sp.call(fn, 1)
            elapsed = time.monotonic() - started
            assert out.kind == "timeout", out
            assert elapsed < LIMITS.call_timeout + 1.5, elapsed
            assert sp.status(fn) == "timeout"
            # not run again: a second call is answered at once
            started = time.monotonic()
            assert sp.call(fn, 2).kind == "timeout"
            assert time.monotonic() - started < 0.5
            out = sp.call("ok", 41)  # the worker was restarted
            assert (out.kind, out.value) == ("value", 42)


CRASHERS = {
    "os._exit": "import os; os._exit(3)",
    "sys.exit": "import sys; sys.exit(0)",
    "segfault": "import ctypes; ctypes.string_at(0)",
    "sigkill-self": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "abort": "import os; os.abort()",
    "close-protocol-fds": "import os\nfor fd in range(3, 64):\n    try:\n        os.close(fd)\n    except OSError:\n        pass",
}


@pytest.mark.parametrize("how", sorted(CRASHERS))
def test_crash_in_a_function_is_reported_and_worker_restarts(sandbox, how):
    body = textwrap.indent(CRASHERS[how], "    ")
    cells = [f"def boom(x):\n{body}\n    return x\n", "def ok(x):\n    return x * 2\n"]
    with student(sandbox, cells, ["boom", "ok"]) as sp:
        assert sp.call("ok", 1).value == 2
        out = sp.call("boom", 1)
        if how == "sys.exit":
            # SystemExit is an exception like any other: reported by name, never a value
            assert (out.kind, out.error) in {("raised", "SystemExit"), ("crashed", "")}, out
        else:
            assert out.kind in ("crashed", "timeout"), out
            assert out.kind == "crashed" or how == "close-protocol-fds", out
        assert not out.ok
        for x in (2, 3):
            out = sp.call("ok", x)
            assert (out.kind, out.value) == ("value", 2 * x), out


def test_hanging_or_exiting_top_level_cells_are_skipped(sandbox):
    cells = [
        "def f(x):\n    return x + 1\n",
        "while True:\n    pass\n",
        "def g(x):\n    return x - 1\n",
        "import os\nos._exit(0)\n",
        "def h(x):\n    return 2 * x\n",
        "raise RuntimeError('cell error')\n",
        "def k(x):\n    return -x\n",
    ]
    started = time.monotonic()
    with student(sandbox, cells, ["f", "g", "h", "k"]) as sp:
        assert time.monotonic() - started < 3 * LIMITS.call_timeout + 10
        assert sp.report.functions == {"f": "ok", "g": "ok", "h": "ok", "k": "ok"}
        assert sp.report.timed_out_cells == [1]
        errors = {e["index"]: e["error"] for e in sp.report.cell_errors}
        assert errors.get(5) == "RuntimeError"
        assert 3 in errors  # os._exit at import time: noted, skipped
        assert [sp.call(fn, 10).value for fn in ("f", "g", "h", "k")] == [11, 9, 20, -10]


MEMORY_BOMBS = {
    "numpy-50GB": "import numpy as np\n    return np.ones(50 * 2**30 // 8)",
    "growing-list": "out = []\n    while True:\n        out.append(' ' * 10**6)",
    "bytes-doubling": "b = b'x'\n    while True:\n        b = b + b",
}


@pytest.mark.parametrize("bomb", sorted(MEMORY_BOMBS))
def test_memory_bombs_fail_fast_and_leave_the_worker_usable(sandbox, bomb):
    cells = [f"def bomb(x):\n    {MEMORY_BOMBS[bomb]}\n", "def ok(x):\n    return x * 3\n"]
    with student(sandbox, cells, ["bomb", "ok"]) as sp:
        started = time.monotonic()
        out = sp.call("bomb", 1)
        assert time.monotonic() - started < LIMITS.call_timeout + 1.5
        if bomb == "numpy-50GB":  # refused at once by the address-space limit: a memory limit, not an error
            assert out.kind == "limit" and "MemoryError" in out.message, out
        else:  # growing at the machine's page-fault speed: which limit comes first (time or memory) varies
            assert out.kind in ("limit", "crashed", "timeout"), out
        if out.kind == "limit":
            assert "memori" in out.message
            assert sp.call("bomb", 1).kind == "limit"  # not run again
        assert sp.call("ok", 5).value == 15


def test_memory_bomb_at_import_time_is_skipped(sandbox):
    cells = ["import numpy as np\nbig = np.ones(50 * 2**30 // 8)\n", "def ok(x):\n    return x\n"]
    with student(sandbox, cells, ["ok"]) as sp:
        assert sp.report.cell_errors[0]["error"] == "MemoryError"
        assert sp.call("ok", 4).value == 4


def test_subprocesses_are_all_killed_after_close(sandbox):
    token = f"{time.time_ns() % 10**9}.{os.getpid()}"
    cells = f"""
        import os, subprocess
        def spawn(n):
            for _ in range(n):
                subprocess.Popen(["sleep", "{token}"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # a daemon: double fork, new session, away from the worker's process group
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", "{token}"])
                os._exit(0)
            os.wait()
            return n
    """
    markers = []
    try:
        with student(sandbox, cells, ["spawn"]) as sp:
            assert sp.call("spawn", 50).value == 50
            markers.append(sp._proc.marker)
            time.sleep(0.3)
            assert len(processes_with(token.encode())) >= 51
        left = wait_gone(token.encode())
        assert left == [], f"{len(left)} processes started by student code survived close()"
        needle = f"PE_SANDBOX_ID={markers[0]}".encode()
        assert wait_gone(needle, "environ") == []
    finally:
        kill_all(processes_with(token.encode()))


@pytest.mark.parametrize(
    "use_bwrap",
    [
        pytest.param(True, id="bwrap", marks=requires_bwrap),
        pytest.param(
            False,
            id="fallback",
            marks=pytest.mark.xfail(
                mechanism() is None,
                strict=True,
                reason=(
                    "without a resource group (no usable control group), a process started with a clean environment "
                    "in a new session escapes both killpg() and the PE_SANDBOX_ID scan in SandboxedProcess.kill()"
                ),
            ),
        ),
    ],
)
def test_processes_that_drop_the_marker_are_killed_too(use_bwrap):
    token = f"{time.time_ns() % 10**9}.{os.getpid()}1"
    cells = f"""
        import subprocess
        def escape(x):
            subprocess.Popen(["/bin/sleep", "{token}"], env={{}}, start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return x
    """
    try:
        with student(Sandbox(LIMITS, use_bwrap=use_bwrap), cells, ["escape"]) as sp:
            assert sp.call("escape", 1).value == 1
            time.sleep(0.3)
        assert wait_gone(token.encode()) == []
    finally:
        kill_all(processes_with(token.encode()))


@pytest.mark.parametrize(
    "use_bwrap",
    [
        pytest.param(True, id="bwrap", marks=requires_bwrap),
        pytest.param(False, id="fallback"),
    ],
)
@pytest.mark.xfail(
    os.geteuid() == 0 and mechanism() is None,
    strict=True,
    reason=(
        "without a resource group, RLIMIT_NPROC is all there is, and it is not enforced when grading as root: "
        "the kernel exempts uid 0, and bwrap's user namespace maps the sandbox's nobody to host root"
    ),
)
def test_process_count_limit_is_enforced(use_bwrap):
    """The group's process limit holds whoever grades (root included), for every process of the run."""
    limits = LIMITS.scaled(processes=32)
    token = f"{time.time_ns() % 10**9}.{os.getpid()}2"
    cells = f"""
        import subprocess
        def spawn(n):
            started = 0
            try:
                for _ in range(n):
                    subprocess.Popen(["sleep", "{token}"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    started += 1
            except OSError:
                pass
            return started
    """
    try:
        with student(Sandbox(limits, use_bwrap=use_bwrap), cells, ["spawn"]) as sp:
            out = sp.call("spawn", 100)
            if mechanism() is not None:  # the run's resource group: the call fails, in Indonesian
                assert out.kind == "limit" and "terlalu banyak proses" in out.message, out
            else:
                assert out.kind == "value"
                assert out.value < 100, "more processes than Limits.processes could be started"
    finally:
        kill_all(processes_with(token.encode()))


@pytest.mark.parametrize(
    "use_bwrap",
    [
        pytest.param(True, id="bwrap", marks=requires_bwrap),
        pytest.param(
            False,
            id="fallback",
            marks=pytest.mark.xfail(
                _has_cap_sys_resource() and shutil.which("setpriv") is None,
                strict=True,
                reason=(
                    "fallback as root without setpriv: student code keeps CAP_SYS_RESOURCE and may raise its own "
                    "hard rlimits, so the memory/CPU/file limits are advisory"
                ),
            ),
        ),
    ],
)
def test_student_cannot_lift_its_resource_limits(use_bwrap):
    # With a resource group RLIMIT_NPROC is left as the grader has it (the group bounds the processes;
    # sandbox/sharing.py), so it is one of the limits set only without a group.
    nproc = "" if mechanism() is not None else ", resource.RLIMIT_NPROC"
    cells = f"""
        import resource
        def lift(x):
            lifted = []
            for res in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_FSIZE{nproc}):
                soft, hard = resource.getrlimit(res)
                try:
                    resource.setrlimit(res, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
                    lifted.append(res)
                except (ValueError, OSError):
                    pass
            return lifted
    """
    with student(Sandbox(LIMITS, use_bwrap=use_bwrap), cells, ["lift"]) as sp:
        out = sp.call("lift", 0)
    assert out.kind == "value" and out.value == [], f"limits lifted by student code: {out.value}"


# --------------------------------------------------------------------------------------------
# Results the grader must never believe
# --------------------------------------------------------------------------------------------
UNTRUSTED_RESULTS = {
    "always-equal": """
        class E:
            def __eq__(self, other):
                return True
            __hash__ = None
            def __array__(self, *a, **k):
                return np.zeros(3)
            def __float__(self):
                return 0.0
        result = E()""",
    "ndarray-subclass": """
        class A(np.ndarray):
            def __eq__(self, other):
                return np.ones(np.shape(other), bool)
            def __array_function__(self, *a, **k):
                return True
        result = np.zeros(3).view(A)""",
    "matrix": "result = np.matrix([[1.0, 2.0]])",
    "masked-array": "result = np.ma.masked_array([1.0, 2.0], mask=[0, 1])",
    "object-array": "result = np.array([1.0, None], dtype=object)",
    "string-array": "result = np.array(['1.0', '2.0'])",
    "structured-array": "result = np.zeros(2, dtype=[('a', 'f8')])",
    "datetime-array": "result = np.array(['2024-01-01'], dtype='datetime64[D]')",
    "wire-format-dict": """
        result = {"__ndarray__": "<f8", "shape": [1], "scalar": False, "data": "AAAAAAAA8D8="}""",
    "dict": "result = {'a': 1.0}",
    "set": "result = {1.0, 2.0}",
    "float-subclass": """
        class F(float):
            def __eq__(self, other):
                return True
        result = F(1.0)""",
    "int-subclass": """
        class I(int):
            def __eq__(self, other):
                return True
        result = I(1)""",
    "list-subclass": """
        class L(list):
            def __eq__(self, other):
                return True
        result = L([1.0])""",
    "namedtuple": """
        import collections
        result = collections.namedtuple('P', 'a b')(1.0, 2.0)""",
    "deeply-nested-list": """
        result = 0.0
        for _ in range(50):
            result = [result]""",
    "list-with-rigged-object": """
        class E:
            def __eq__(self, other):
                return True
        result = [1.0, E()]""",
    "generator": "result = (x for x in [1.0])",
    "function": "result = print",
    "bytes": "result = b'1.0'",
    "module": "result = np",
}


ONE_CLAUSE = {"K1": Clause("K1", "f benar", 1.0)}  # a comparison's failure is charged to it


@pytest.mark.parametrize("kind", sorted(UNTRUSTED_RESULTS))
def test_untrusted_results_are_invalid_never_values(sandbox, kind):
    code = "import numpy as np\n" + textwrap.dedent(UNTRUSTED_RESULTS[kind]).strip() + "\n"
    code += "def f(*args):\n    return result\n"
    with student(sandbox, code, ["f"]) as sp:
        out = sp.call("f", 1.0)
        assert out.kind == "invalid", out
        grader = Grader(sp, {"f": lambda *a: np.zeros(3)})
        assert grader.expect("f", 1.0) is None
        assert not grader.verdicts(ONE_CLAUSE)[0].passed


@pytest.mark.parametrize("expected", [np.arange(6.0).reshape(2, 3), 2.5, (np.ones(2), 1.0)], ids=str)
def test_rigged_objects_cannot_pass_assert_close(expected):
    class AlwaysEqual:
        __hash__ = None

        def __eq__(self, other):
            return True

        def __array__(self, *args, **kwargs):
            return np.asarray(expected if not isinstance(expected, tuple) else expected[0], dtype=float)

        def __float__(self):
            return float(np.ravel(np.asarray(expected[0] if isinstance(expected, tuple) else expected))[0])

    class Rigged(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(other), bool)

        def __array_ufunc__(self, *args, **kwargs):
            return True

        def __array_function__(self, *args, **kwargs):
            return True

    class RiggedFloat(float):
        def __eq__(self, other):
            return True

        __hash__ = float.__hash__

    class RiggedTuple(tuple):
        def __eq__(self, other):
            return True

        __hash__ = tuple.__hash__

    shape = np.shape(expected[0] if isinstance(expected, tuple) else expected)
    wrong_array = np.full(shape, 123.0).view(Rigged)
    candidates = [
        AlwaysEqual(),
        wrong_array,
        RiggedFloat(-1.0),
        RiggedTuple((AlwaysEqual(), AlwaysEqual())),
        RiggedTuple((wrong_array, RiggedFloat(-1.0))),
        [AlwaysEqual()],
        None,
        "2.5",
    ]
    for actual in candidates:
        with pytest.raises(CheckFailed):
            assert_close(actual, expected, "nilai")


# --------------------------------------------------------------------------------------------
# The protocol: stdout, stdin and forged messages
# --------------------------------------------------------------------------------------------
FIND_PROTOCOL_FDS = """
import os, sys
def protocol_fds():
    fds = []
    for name in os.listdir('/proc/self/fd'):
        try:
            if os.readlink('/proc/self/fd/' + name).startswith('pipe:'):
                fds.append(int(name))
        except OSError:
            pass
    return fds
def request_id():
    frame = sys._getframe(1)
    while frame is not None:
        if isinstance(frame.f_locals.get('request'), dict):
            return frame.f_locals['request'].get('id')
        frame = frame.f_back
    return None
"""


def test_print_and_input_do_not_break_the_protocol(sandbox):
    cells = """
        import os, sys
        print('{"event": "result", "id": 1, "ok": true, "value": 999}')
        print("x" * 100000)
        def chatty(x):
            print('{"event": "result", "id": 2, "ok": true, "value": 999}')
            print("\\n" * 1000, file=sys.stderr)
            sys.__stdout__.write('{"event": "loaded"}\\n')
            sys.__stdout__.flush()
            os.write(1, b'garbage\\n')
            os.write(2, b'garbage\\n')
            try:
                reply = input("nilai? ")
            except EOFError:
                reply = "eof"
            return [x * 2, reply]
        def asks(x):
            return input()
        def reads_stdin(x):
            return sys.stdin.read()
    """
    with student(sandbox, cells, ["chatty", "asks", "reads_stdin"]) as sp:
        for x in (1, 2, 3):
            out = sp.call("chatty", x)
            assert (out.kind, out.value) == ("value", [2 * x, "eof"]), out
        out = sp.call("asks", 1)
        assert (out.kind, out.error) == ("raised", "EOFError")
        assert sp.call("reads_stdin", 1).value == ""
        assert sp.call("chatty", 5).value == [10, "eof"]


def test_garbage_on_the_protocol_fd_is_never_a_value(sandbox):
    cells = (
        FIND_PROTOCOL_FDS
        + """
def f(x):
    for fd in protocol_fds():
        try:
            os.write(fd, b'this is not json\\n')
        except OSError:
            pass
    return 2 * x
def ok(x):
    return 2 * x
"""
    )
    with student(sandbox, cells, ["f", "ok"]) as sp:
        out = sp.call("f", 3)
        assert out.kind in ("crashed", "invalid"), out
        # the grader recovers: a fresh worker answers the other function
        results = [sp.call("ok", 4) for _ in range(2)]
        assert results[-1].value == 8


def test_forged_replies_cannot_make_a_wrong_function_pass(sandbox):
    """A forged reply (right id, chosen value) is still compared with the reference."""
    cells = (
        FIND_PROTOCOL_FDS
        + """
def double(x):
    rid = request_id()
    for fd in protocol_fds():
        for value in (b'999', b'{"__ndarray__":"<f8","shape":[],"scalar":true,"data":"AAAAAAAA8D8="}'):
            try:
                os.write(fd, b'{"event":"result","id":%d,"ok":true,"value":%s}\\n' % (rid, value))
                os.write(fd, b'{"event":"result","id":%d,"ok":true,"value":%s}\\n' % (rid + 1, value))
            except OSError:
                pass
    return x + 1  # wrong: should be 2 * x
"""
    )
    with student(sandbox, cells, ["double"]) as sp:
        grader = Grader(sp, {"double": lambda x: 2.0 * x})
        for x in (3.0, 5.0, 7.0, 11.0):
            assert grader.expect("double", x) is None
        assert not grader.verdicts(ONE_CLAUSE)[0].passed
        assert all(not (rec.outcome.ok and rec.outcome.value == 2.0 * rec.args[0]) for rec in grader.log)


def test_huge_message_is_refused_within_the_call_timeout(sandbox):
    """A reply of millions of tiny JSON items must not tie up the grader (memory, time)."""
    cells = (
        FIND_PROTOCOL_FDS
        + """
def huge():
    rid = request_id()
    fd = protocol_fds()[-1]
    os.write(fd, b'{"event":"result","id":%d,"ok":true,"value":[' % rid)
    chunk = b'0,' * 100000
    for _ in range(79):
        os.write(fd, chunk)
    os.write(fd, b'0,' * 99999 + b'0]}\\n')
    return 0
def ok(x):
    return x
"""
    )
    with student(sandbox, cells, ["huge", "ok"]) as sp:
        started = time.monotonic()
        out = sp.call("huge")
        elapsed = time.monotonic() - started
        assert out.kind != "value", "an 8-million-item list was decoded as a value"
        assert elapsed < LIMITS.call_timeout + 1.0, f"the call took {elapsed:.1f} s"
        assert sp.call("ok", 1).kind in ("value", "invalid")


# --------------------------------------------------------------------------------------------
# Scratch directories
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ending", ["normal", "crash", "timeout", "load-crash"])
def test_scratch_directory_is_removed_after_close(sandbox, ending):
    cells = """
        import os
        os.makedirs('locked/deeper', exist_ok=True)
        for i in range(20):
            with open(f'locked/deeper/f{i}', 'w') as fh:
                fh.write('x')
        os.symlink('/', 'root-link')
        os.chmod('locked/deeper', 0)
        os.chmod('locked', 0)
        def ok(x):
            return x
        def crash(x):
            os._exit(1)
        def spin(x):
            while True:
                pass
    """
    if ending == "load-crash":
        cells += "\nos._exit(1)\n"
    sp = student(sandbox, cells, ["ok", "crash", "spin"])
    sp.start()
    try:
        scratch = sp._scratch
        assert scratch is not None and scratch.exists()
        assert scratch.name.startswith("pe-sandbox-") and scratch.parent == Path(tempfile_dir())
        if ending == "crash":
            assert sp.call("crash", 1).kind == "crashed"
        elif ending == "timeout":
            assert sp.call("spin", 1).kind == "timeout"
        elif ending == "normal":
            assert sp.call("ok", 1).value == 1
    finally:
        sp.close()
    assert not scratch.exists()
    assert Path("/").exists()  # the symlink to / was removed, not followed


# --------------------------------------------------------------------------------------------
# The grader never follows links the student planted in the scratch directory
# --------------------------------------------------------------------------------------------
@requires_bwrap
def test_grader_does_not_write_through_symlinks_planted_in_scratch(tmp_path):
    """Regression test for a fixed bug, which was: on a restart ``StudentProcess._spawn`` copies worker.py/codec.py (and ``_prepare_scratch``
    the matplotlib font cache) into the scratch directory with ``shutil.copy``, which follows a symlink
    the student left there: sandboxed code can overwrite any host file the grader (root) can write."""
    victims = {name: tmp_path / f"victim-{name}" for name in ("codec", "worker", "fontlist")}
    for path in victims.values():
        path.write_text("precious\n")
    cells = [
        f"""
import glob, os
for name, victim in (('codec.py', {str(victims["codec"])!r}), ('worker.py', {str(victims["worker"])!r})):
    os.unlink('/sandbox/' + name)
    os.symlink(victim, '/sandbox/' + name)
for path in glob.glob('/sandbox/.mplconfig/fontlist-*.json'):
    os.unlink(path)
    os.symlink({str(victims["fontlist"])!r}, path)
os._exit(0)
""",
        "def f(x):\n    return x + 1\n",
    ]
    with student(Sandbox(LIMITS, use_bwrap=True), cells, ["f"]) as sp:
        sp.call("f", 1)
    changed = {
        name: path.read_text()[:60] for name, path in victims.items() if path.read_text() != "precious\n"
    }
    assert changed == {}, f"host files overwritten by the grader: {changed}"


def test_fallback_chown_does_not_follow_symlinks(tmp_path, monkeypatch):
    """Regression test for a fixed bug, which was: in the fallback that drops root to nobody, ``_prepare_scratch`` chowns everything under the
    scratch directory with ``os.chown`` (follows symlinks) on every worker (re)start: a symlink left by
    student code hands any host file (e.g. /etc/shadow) to nobody."""
    if os.geteuid() != 0:
        pytest.skip("needs root (the fallback only drops privileges when grading as root)")
    monkeypatch.setattr(sandbox_module, "can_drop_root", lambda: True)
    victim = tmp_path / "victim"
    victim.write_text("root only\n")
    os.chown(victim, 0, 0)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "link").symlink_to(victim)
    try:
        sandbox_module._prepare_scratch(scratch, use_bwrap=False)
        assert victim.stat().st_uid == 0, "a host file outside the scratch directory was chowned to nobody"
    finally:
        os.chown(victim, 0, 0)


# --------------------------------------------------------------------------------------------
# bubblewrap only: what the student cannot see or touch
# --------------------------------------------------------------------------------------------
def test_course_files_are_invisible(bwrap_sandbox):
    paths = [
        REPO / "graders",
        GRADERS / "01_embedding" / "checks.py",
        REPO / "gradebook.db",
        REPO / "source",
        REPO / "source" / "positional-encoding" / "01_embedding.ipynb",
        REPO / "nbgrader_config.py",
        REPO / "src" / "pe_course",
        REPO / "submitted",
        REPO / "autograded",
        Path("/root/.bash_history"),
        Path("/etc/passwd"),
    ]
    cells = """
        import os
        def probe(paths):
            return [os.path.exists(p) for p in paths]
        def listing(path):
            try:
                return sorted(os.listdir(path))
            except OSError as exc:
                return type(exc).__name__
        def read(path):
            with open(path, 'rb') as fh:
                return len(fh.read())
        def importable(name):
            import importlib.util
            return importlib.util.find_spec(name) is not None
    """
    with student(bwrap_sandbox, cells, ["probe", "listing", "read", "importable"]) as sp:
        assert sp.call("probe", [str(p) for p in paths]).value == [False] * len(paths)
        # the venv (inside the course directory here) is bound read-only; nothing else of the course is
        listing = sp.call("listing", str(REPO)).value
        assert listing == "FileNotFoundError" or set(listing) <= {".venv"}, listing
        assert sp.call("read", str(REPO / "gradebook.db")).kind == "raised"
        assert sp.call("importable", "pe_course").value is False
        assert sp.call("importable", "graders").value is False


def test_site_packages_are_read_only(bwrap_sandbox):
    name = f"zz_pe_hostile_{uuid.uuid4().hex}"
    cells = f"""
        import os, site, sysconfig
        def write_everywhere():
            dirs = set(site.getsitepackages() + [site.getusersitepackages(), sysconfig.get_paths()['purelib'],
                       sysconfig.get_paths()['stdlib']])
            results = {{}}
            for d in sorted(dirs):
                for fname in ('{name}.pth', 'sitecustomize.py', 'usercustomize.py'):
                    path = os.path.join(d, fname)
                    if os.path.exists(path):
                        continue
                    try:
                        with open(path, 'x') as fh:
                            fh.write('# {name}\\n')
                        results[path] = 'written'
                    except OSError as exc:
                        results[path] = type(exc).__name__
            return sorted(results.items())
    """
    with student(bwrap_sandbox, cells, ["write_everywhere"]) as sp:
        out = sp.call("write_everywhere")
    assert out.kind == "value" and out.value
    assert [p for p, r in out.value if r == "written"] == []
    for path, _ in out.value:
        p = Path(path)
        assert not (p.exists() and name in p.read_text(errors="replace")), path


def test_no_network(bwrap_sandbox):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.setblocking(False)
    port = server.getsockname()[1]
    cells = """
        import socket
        def connect(host, port):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(1.0)
            try:
                s.connect((host, port))
            except OSError as exc:
                return type(exc).__name__
            return 'connected'
        def resolve(name):
            try:
                return socket.gethostbyname(name)
            except OSError as exc:
                return type(exc).__name__
    """
    try:
        with student(bwrap_sandbox, cells, ["connect", "resolve"]) as sp:
            assert sp.call("connect", "127.0.0.1", port).value != "connected"
            assert sp.call("connect", "1.1.1.1", 53).value != "connected"
            assert sp.call("resolve", "pypi.org").value != "connected"
            assert not str(sp.call("resolve", "pypi.org").value)[:1].isdigit()
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()


KILL_PARENT_SCRIPT = r"""
import json, os, sys
from pe_course.sandbox import Limits, Sandbox
from pe_course.sandbox.client import StudentProcess
cells = ['''
import os, signal
def kill_parent(grader_pid):
    for pid in (os.getppid(), grader_pid, 1):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return 0
def kill_group(x):
    try:
        os.killpg(0, signal.SIGKILL)
    except OSError:
        pass
    return 0
def kill_everything(x):
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    return 0
def ok(x):
    return x + 1
''']
results = []
with StudentProcess(cells, ["kill_parent", "kill_group", "kill_everything", "ok"],
                    Sandbox(Limits(call_timeout=3.0), use_bwrap=True)) as sp:
    for fn in ("kill_parent", "kill_group", "kill_everything"):
        out = sp.call(fn, os.getpid())
        results.append([fn, out.kind, sp.call("ok", 1).value])
print(json.dumps(results))
"""


def test_student_cannot_kill_the_grader(bwrap_sandbox):
    """Run a sacrificial grader process: if the sandbox leaked, only it would die."""
    proc = subprocess.run(
        [sys.executable, "-c", KILL_PARENT_SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, f"the grader died (rc={proc.returncode}): {proc.stderr[-2000:]}"
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [r[0] for r in results] == ["kill_parent", "kill_group", "kill_everything"]
    for fn, kind, after in results:
        assert after == 2, (fn, kind)


def test_tmp_is_private(bwrap_sandbox, tmp_path):
    token = uuid.uuid4().hex
    host_file = Path("/tmp") / f"pe-host-{token}"
    host_file.write_text("host secret")
    cells = f"""
        import os, tempfile
        def write_tmp(x):
            with open('/tmp/pe-inside-{token}', 'w') as fh:
                fh.write('x')
            return tempfile.gettempdir()
        def sees_host_tmp(x):
            return os.path.exists('/tmp/pe-host-{token}')
    """
    try:
        with student(bwrap_sandbox, cells, ["write_tmp", "sees_host_tmp"]) as sp:
            assert sp.call("write_tmp", 1).value == "/tmp"
            assert sp.call("sees_host_tmp", 1).value is False
        assert not (Path("/tmp") / f"pe-inside-{token}").exists()
        assert not (Path(tempfile_dir()) / f"pe-inside-{token}").exists()
    finally:
        host_file.unlink()


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


@requires_bwrap
def test_python_installed_under_tmp_stays_visible(monkeypatch, tmp_path_factory):
    """Regression: CI clones (and their venvs) can live under /tmp; the sandbox's private /tmp must
    not hide them (bwrap applies mounts in order)."""
    import subprocess as sp

    import pe_course.sandbox.isolation as sandbox_module

    root = Path(tempfile.mkdtemp(prefix="pe-fake-venv-", dir="/tmp"))
    try:
        (root / "marker").write_text("visible")
        monkeypatch.setattr(sandbox_module, "_python_roots", lambda: [str(root)])
        sb = Sandbox(use_bwrap=True)
        with (
            sb.scratch() as scratch,
            sb.start(["/usr/bin/cat", str(root / "marker")], scratch, stdout=sp.PIPE, stderr=sp.PIPE) as proc,
        ):
            out, _ = proc.proc.communicate(timeout=30)
        assert out == b"visible"
    finally:
        shutil.rmtree(root, ignore_errors=True)

"""Hostile submissions: correct work everywhere except a wrong ``embed``, plus code that attacks the grading.

Each attack must earn no more on ``test_embed`` than the same wrong ``embed`` without it, leave
nothing behind on the host, and not disturb the next student's grade. Most cases go through
``pe_course.engine.grade_notebook`` with the real sandbox; the key ones also through a real
``nbgrader autograde`` run in a course copy (one run, many students).

Attacks that would damage the host if the sandbox failed (writing the gradebook, site-packages,
graders/) run with bubblewrap only and only ever target the disposable course copy.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import uuid
from pathlib import Path

import nbformat
import pytest
from conftest import GRADERS, REPO, CourseCopy, append_code, reference_nb, requires_bwrap, with_code

from pe_course.engine import grade_notebook
from pe_course.engine.discovery import load_suite
from pe_course.sandbox import Limits, Sandbox, landlock
from pe_course.sandbox import isolation as sandbox_module
from pe_course.sandbox.leftovers import RECORD
from pe_course.steps import execute as execute_step
from pe_course.steps.execute import SandboxedExecute

NB = "01_embedding"
EMBED_MAX = 3.0
LIMITS = Limits(call_timeout=3.0, load_timeout=60.0)

# Correct except for the T > block_size check: earns 2.25 of 3, K4 lost (see test_baseline_wrong_embed).
WRONG_EMBED = """import numpy as np


def embed(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    rows = np.arange(len(ids)) % len(pos_table)  # forgets the ValueError for T > block_size
    return tok_table[ids] + pos_table[rows]
"""

ONE_HOT_SYNTAX_ERROR = "def one_hot(ids, vocab_size)\n    return None\n"

MODES = [pytest.param(True, id="bwrap", marks=requires_bwrap), pytest.param(False, id="fallback")]


def wrong_nb(extra_in_cell: str = "", appended: tuple[str, ...] = ()):
    nb = with_code(reference_nb(NB), "embed", WRONG_EMBED + textwrap.dedent(extra_in_cell))
    for code in appended:
        nb = append_code(nb, textwrap.dedent(code))
    return nb


def scores(result) -> dict[str, float]:
    return {c.grade_id: c.score for c in result.cells}


@pytest.fixture(scope="module")
def private_tmp(tmp_path_factory):
    """Scratch directories of this module's graders go here, so 'nothing left behind' is checkable."""
    path = tmp_path_factory.mktemp("hostile-tmp")
    old = tempfile.tempdir
    tempfile.tempdir = str(path)
    yield path
    tempfile.tempdir = old


@pytest.fixture(scope="module")
def grade(suite, reference, private_tmp):
    def run(nb, use_bwrap: bool | None = None, limits: Limits = LIMITS, graders: Path | None = None):
        sb = Sandbox(limits, use_bwrap=use_bwrap)
        s = load_suite(graders) if graders else suite
        result = grade_notebook(nb, NB, s, reference, sb)
        # what stays by design: this user's note of where its graders make groups (sandbox.leftovers)
        leftovers = sorted(p.name for p in private_tmp.iterdir() if not p.name.startswith(RECORD))
        assert leftovers == [], f"scratch directories left behind: {leftovers}"
        return result

    return run


@pytest.fixture(scope="module")
def baseline(grade) -> dict[str, float]:
    return scores(grade(wrong_nb()))


def test_baseline_wrong_embed(baseline):
    assert baseline == {"test_embed": 2.25, "test_one_hot": 1.0, "test_embed_backward": 3.0}


def assert_no_gain(result, baseline, others_full: bool = True) -> None:
    got = scores(result)
    assert got["test_embed"] <= baseline["test_embed"], f"the attack earned points: {got}"
    if others_full:
        assert got["test_one_hot"] == 1.0 and got["test_embed_backward"] == 3.0, got


def assert_next_student_fine(grade, use_bwrap=None) -> None:
    result = grade(reference_nb(NB), use_bwrap=use_bwrap)
    assert scores(result) == {"test_embed": 3.0, "test_one_hot": 1.0, "test_embed_backward": 3.0}


# --------------------------------------------------------------------------------------------
# 1-4, 10: tampering inside the worker (safe in both modes)
# --------------------------------------------------------------------------------------------
PATCH_NUMPY = """
import numpy, numpy.testing
numpy.allclose = lambda *a, **k: True
numpy.isclose = lambda a, b, *x, **k: numpy.ones(numpy.broadcast(numpy.asarray(a), numpy.asarray(b)).shape, bool)
numpy.array_equal = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.testing.assert_array_equal = lambda *a, **k: None
"""

PATCH_BUILTINS = """
import builtins
builtins.isinstance = lambda *a: True
builtins.abs = lambda x: 0
builtins.AssertionError = type('AssertionError', (Exception,), {})
AssertionError = None
builtins.len = lambda x: 0
"""

RIGGED_RESULT = """
_wrong_embed = embed


class _AlwaysEqual:
    __hash__ = None
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __array__(self, *a, **k):
        return np.zeros(1)


class _Rigged(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), bool)
    def __array_ufunc__(self, *a, **k):
        return True
    def __array_function__(self, *a, **k):
        return True


def embed(ids, tok_table, pos_table):
    out = _wrong_embed(ids, tok_table, pos_table)
    if len(ids) % 2:
        return _AlwaysEqual()
    return np.asarray(out).view(_Rigged)
"""

IPYTHON_AND_PYTEST = """
ip = get_ipython()
def _strip_asserts(lines):
    return [l for l in lines if not l.lstrip().startswith('assert')]
try:
    ip.input_transformers_post.append(_strip_asserts)
except Exception:
    pass
try:
    ip.input_transformers_cleanup.append(_strip_asserts)
except Exception:
    pass
import pytest, _pytest.python_api, _pytest.outcomes
pytest.approx = lambda *a, **k: _AnythingEquals()
_pytest.python_api.approx = pytest.approx
_pytest.outcomes.fail = lambda *a, **k: None
pytest.fail = lambda *a, **k: None
class _AnythingEquals:
    def __eq__(self, other):
        return True
"""

STEAL_FROM_MEMORY = """
import gc, inspect, sys
_wrong_embed = embed


def embed(ids, tok_table, pos_table):
    want = (len(ids), np.shape(tok_table)[1])
    # look for an expected value anywhere in this process: frames, gc-tracked containers
    for frame_info in inspect.stack():
        for value in list(frame_info.frame.f_locals.values()):
            if isinstance(value, np.ndarray) and value.shape == want and value is not tok_table:
                return value.copy() + 0.0
    for obj in gc.get_objects():
        if isinstance(obj, np.ndarray) and obj.shape == want and obj is not tok_table and obj is not pos_table:
            return obj.copy() + 0.0
    frame = sys._getframe()
    while frame.f_back is not None:
        frame = frame.f_back
    return _wrong_embed(ids, tok_table, pos_table)
"""

WORKER_CASES = {
    "numpy-patched": (PATCH_NUMPY, (), True),
    "builtins-patched": (PATCH_BUILTINS, (), False),  # breaks the student's whole worker: no gain anywhere
    "rigged-result": (RIGGED_RESULT, (), True),
    "ipython-and-pytest": ("", (IPYTHON_AND_PYTEST,), True),
    "steal-from-memory": (STEAL_FROM_MEMORY, (), True),
}


@pytest.mark.parametrize("use_bwrap", MODES)
@pytest.mark.parametrize("case", sorted(WORKER_CASES))
def test_worker_tampering_earns_nothing(grade, baseline, case, use_bwrap):
    in_cell, appended, others_full = WORKER_CASES[case]
    result = grade(wrong_nb(in_cell, appended), use_bwrap=use_bwrap)
    assert_no_gain(result, baseline, others_full=others_full)
    if case == "builtins-patched":
        assert scores(result)["test_embed"] <= baseline["test_embed"]
    assert_next_student_fine(grade, use_bwrap=use_bwrap)


def test_patched_numpy_in_the_worker_does_not_leak_into_the_grader(grade, baseline):
    import numpy as np

    grade(wrong_nb(PATCH_NUMPY))
    assert not np.allclose([0.0], [1.0])
    assert not np.array_equal([0.0], [1.0])
    with pytest.raises(AssertionError):
        np.testing.assert_allclose([0.0], [1.0])


# --------------------------------------------------------------------------------------------
# 9: exits, hangs and bombs — the other functions keep full marks, the batch goes on
# --------------------------------------------------------------------------------------------
EXIT_AT_IMPORT = "import os\nos._exit(0)\n"
LOOP_AT_IMPORT = "while True:\n    pass\n"
LOOP_IN_EMBED = """
_wrong_embed = embed
def embed(ids, tok_table, pos_table):
    if len(ids) >= 6:
        while True:
            pass
    return _wrong_embed(ids, tok_table, pos_table)
"""
EXIT_IN_EMBED = """
_wrong_embed = embed
def embed(ids, tok_table, pos_table):
    if len(ids) >= 6:
        import os
        os._exit(0)
    return _wrong_embed(ids, tok_table, pos_table)
"""
MEMORY_IN_EMBED = """
_wrong_embed = embed
def embed(ids, tok_table, pos_table):
    if len(ids) >= 6:
        hoard = []
        while True:
            hoard.append(np.ones(10**7))
    return _wrong_embed(ids, tok_table, pos_table)
"""


@pytest.mark.parametrize("use_bwrap", MODES)
@pytest.mark.parametrize("case", ["exit-at-import", "loop-at-import"])
def test_top_level_exit_or_hang_only_costs_that_cell(grade, case, use_bwrap):
    code = EXIT_AT_IMPORT if case == "exit-at-import" else LOOP_AT_IMPORT
    nb = reference_nb(NB)
    cells = nb.cells
    at = next(
        i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "solution_one_hot"
    )
    cells.insert(at, nbformat.v4.new_code_cell(code))
    result = grade(nb, use_bwrap=use_bwrap)
    assert scores(result) == {"test_embed": 3.0, "test_one_hot": 1.0, "test_embed_backward": 3.0}
    if case == "loop-at-import":
        assert result.timed_out_cells
    else:
        assert any(e["error"] == "ProsesBerhenti" for e in result.cell_errors)
    record = result.to_dict()
    assert record["score"] == 7.0
    assert_next_student_fine(grade, use_bwrap=use_bwrap)


@pytest.mark.parametrize("use_bwrap", MODES)
@pytest.mark.parametrize(
    ("case", "status"), [("loop", "timeout"), ("exit", "crashed"), ("memory", ("resource-limit", "timeout"))]
)
def test_hostile_embed_costs_only_embed(grade, baseline, case, status, use_bwrap):
    code = {"loop": LOOP_IN_EMBED, "exit": EXIT_IN_EMBED, "memory": MEMORY_IN_EMBED}[case]
    limits = LIMITS.scaled(address_space=1536 * 1024 * 1024) if case == "memory" else LIMITS
    result = grade(wrong_nb(code), use_bwrap=use_bwrap, limits=limits)
    assert_no_gain(result, baseline)
    cell = result.cell("test_embed")
    # memory grows at the machine's page-fault speed: the call limit or a memory limit may come first
    statuses = status if isinstance(status, tuple) else (status,)
    assert cell.status in statuses
    record = result.to_dict()
    assert {c["grade_id"]: c["status"] for c in record["cells"]}["test_embed"] in statuses
    assert record["cells"][1]["status"] == "ok" and record["cells"][2]["status"] == "ok"
    assert_next_student_fine(grade, use_bwrap=use_bwrap)


SLOW_BUT_CORRECT = """
import time
_calls = [0]


def embed(ids, tok_table, pos_table):
    _calls[0] += 1
    if _calls[0] > 3:  # the chapter examples are fast; every later call takes just under the call limit
        time.sleep(0.3)
    ids = np.asarray(ids, dtype=int)
    if len(ids) > len(pos_table):
        raise ValueError("T > block_size")
    return tok_table[ids] + pos_table[: len(ids)]
"""


def test_slow_calls_cannot_stretch_the_notebook_time_limit(grade):
    """Regression test for a fixed bug, which was: ``grade_notebook``'s notebook deadline is only checked between checks, never between the
    calls of one check: a function that answers just under ``call_timeout`` keeps the grader busy for
    (calls in the check) x call_timeout past ``notebook_timeout`` (with the course's settings, 25 x 10 s
    beyond the 120 s limit for every such student)."""
    import time

    limits = Limits(call_timeout=0.5, notebook_timeout=2.5, load_timeout=30.0)
    started = time.monotonic()
    result = grade(wrong_nb(SLOW_BUT_CORRECT), limits=limits)
    elapsed = time.monotonic() - started
    assert result.cell("test_embed").score < EMBED_MAX
    assert elapsed < limits.notebook_timeout + 2.0, (
        f"grading took {elapsed:.1f} s for a {limits.notebook_timeout} s limit"
    )


HTML_PAYLOAD = """
_wrong_embed = embed
_XSS = '<img src=x onerror="alert(1)"><script>alert("pe-xss")</script>'
_Evil = type('<img src=x onerror=alert(2)>', (Exception,), {})
_Odd = type('<script>alert("pe-xss-type")</script>', (), {})


def embed(ids, tok_table, pos_table):
    if len(ids) == 0:
        return _Odd()
    if len(ids) % 2:
        raise ValueError(_XSS)
    raise _Evil(_XSS)
"""


def test_student_text_cannot_inject_html_into_feedback(grade):
    """Regression test for a fixed bug (XSS into formgrader / feedback), which was: exception messages, exception class names and type names of
    returned objects come from the student's worker and go unescaped into the ``text/markdown`` feedback
    that ``ScoreWithGraders`` puts in the test cell; nbconvert renders raw HTML in markdown, so the
    instructor's formgrader page would run the student's script."""
    import re

    from nbconvert import HTMLExporter

    from pe_course.steps.score import score_outputs

    result = grade(wrong_nb(HTML_PAYLOAD))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("", outputs=score_outputs(c)) for c in result.cells]
    markdown = "\n".join(
        o.data.get("text/markdown", "")
        for c in nb.cells
        for o in c.outputs
        if o.output_type == "display_data"
    )
    assert "pe-xss" in markdown  # the messages are shown ...
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert not re.search(r"<img[^>]*onerror", html), "student HTML rendered in the feedback"  # ... as text
    assert "<script>alert(" not in html


KILL_PARENT_GRADER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from conftest import GRADERS, REPO, reference_nb, with_code
from pe_course.engine import grade_notebook
from pe_course.engine.discovery import load_suite
from pe_course.course.notebooks import load_reference
from pe_course.sandbox import Limits, Sandbox
code = sys.argv[2]
suite, reference = load_suite(GRADERS), load_reference(REPO / "source" / "positional-encoding")
sb = Sandbox(Limits(call_timeout=3.0), use_bwrap=True)
first = grade_notebook(with_code(reference_nb("01_embedding"), "embed", code), "01_embedding", suite, reference, sb)
after = grade_notebook(reference_nb("01_embedding"), "01_embedding", suite, reference, sb)
print(json.dumps([first.to_dict(), after.to_dict()]))
"""


@requires_bwrap
def test_killing_the_grader_from_embed_fails(baseline):
    code = WRONG_EMBED + textwrap.dedent("""
        _wrong_embed = embed
        def embed(ids, tok_table, pos_table):
            import os, signal
            for pid in (os.getppid(), 1, -1):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            return _wrong_embed(ids, tok_table, pos_table)
        """)
    proc = subprocess.run(
        [sys.executable, "-c", KILL_PARENT_GRADER, str(Path(__file__).resolve().parents[1]), code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"the grader was killed (rc={proc.returncode}): {proc.stderr[-2000:]}"
    first, after = json.loads(proc.stdout.strip().splitlines()[-1])
    got = {c["grade_id"]: c["score"] for c in first["cells"]}
    assert got["test_embed"] <= baseline["test_embed"]
    assert got["test_one_hot"] == 1.0 and got["test_embed_backward"] == 3.0
    # inside bwrap the parent is the namespace's init, which ignores the signal: nothing happens at all
    assert {c["grade_id"]: c["status"] for c in first["cells"]}["test_embed"] in ("ok", "crashed")
    assert after["score"] == 7.0


# --------------------------------------------------------------------------------------------
# 6-8: the host's files (bubblewrap only; targets are the disposable course copy)
# --------------------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            st = path.stat()
            out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def site_dirs() -> list[Path]:
    dirs = {
        *site.getsitepackages(),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        sysconfig.get_paths()["stdlib"],
    }
    return [Path(d) for d in sorted(dirs) if Path(d).is_dir()]


def hostile_files_code(course: Path, token: str) -> str:
    return f"""
import os, site, sqlite3, sysconfig
_TOKEN = {token!r}
_COURSE = {str(course)!r}
_REPO = {str(REPO)!r}
_log = []

def _walk_up(name):
    found, here = [], os.path.abspath(os.getcwd())
    while True:
        candidate = os.path.join(here, name)
        if os.path.exists(candidate):
            found.append(candidate)
        parent = os.path.dirname(here)
        if parent == here:
            return found
        here = parent

def _write_new(path, text):
    try:
        with open(path, 'x') as fh:
            fh.write(text)
        _log.append(('written', path))
    except OSError as exc:
        _log.append((type(exc).__name__, path))

# 6: the gradebook
for db in _walk_up('gradebook.db') + [os.path.join(_COURSE, 'gradebook.db'), '../../../gradebook.db']:
    try:
        con = sqlite3.connect('file:' + db + '?mode=rw', uri=True)
        con.execute("UPDATE grade SET manual_score = 3, auto_score = 3")
        con.commit()
        con.close()
        _log.append(('gradebook-written', db))
    except Exception as exc:
        _log.append((type(exc).__name__, db))

# 8: conftest.py, sitecustomize.py, .pth files
for folder in _walk_up('graders') + [os.path.join(_COURSE, 'graders'), os.getcwd()]:
    _write_new(os.path.join(folder, 'conftest.py'), '# ' + _TOKEN + '\\n')
for d in set(site.getsitepackages() + [sysconfig.get_paths()['purelib'], sysconfig.get_paths()['stdlib']]):
    _write_new(os.path.join(d, 'sitecustomize.py'), '# ' + _TOKEN + '\\n')
    _write_new(os.path.join(d, 'zz-' + _TOKEN + '.pth'), '# ' + _TOKEN + '\\n')
_write_new('/tmp/' + _TOKEN, _TOKEN)

# 7: the instructor's reference
_ref_embed = None
for nbpath in (_walk_up('source')
               + [os.path.join(_COURSE, 'source'), os.path.join(_REPO, 'source')]):
    path = os.path.join(nbpath, 'positional-encoding', '01_embedding.ipynb') if not nbpath.endswith('.ipynb') else nbpath
    try:
        import json as _json
        with open(path) as fh:
            nb = _json.load(fh)
    except OSError as exc:
        _log.append((type(exc).__name__, path))
        continue
    ns = {{}}
    for cell in nb['cells']:
        src = ''.join(cell['source'])
        if 'def embed' in src:
            exec(src, ns)
            _ref_embed = ns['embed']
            _log.append(('reference-found', path))
try:
    import importlib.util
    spec = importlib.util.spec_from_file_location('g', os.path.join(_REPO, 'graders', '__init__.py'))
    _log.append(('graders-importable', str(spec)))
except Exception as exc:
    _log.append((type(exc).__name__, 'graders'))

if _ref_embed is not None:
    embed = _ref_embed
print(_log)
"""


@pytest.fixture
def hostile_course(course_copy) -> CourseCopy:
    return course_copy


PROTECTED_MODES = [
    pytest.param(True, id="bwrap", marks=requires_bwrap),
    pytest.param(
        False,
        id="unisolated-landlock",  # the instructor's opt-in: no bubblewrap, Landlock fences the files
        marks=pytest.mark.skipif(not landlock.abi(), reason="the kernel has no Landlock"),
    ),
]


@pytest.mark.parametrize("use_bwrap", PROTECTED_MODES)
def test_host_files_are_out_of_reach(grade, baseline, hostile_course, use_bwrap):
    course = hostile_course.root
    token = f"pe-hostile-{uuid.uuid4().hex}"
    before = snapshot(course)
    result = grade(wrong_nb(hostile_files_code(course, token)), use_bwrap=use_bwrap)
    assert_no_gain(result, baseline)
    assert scores(result)["test_embed"] == baseline["test_embed"]
    assert snapshot(course) == before, "files of the course copy changed"
    for folder in (course / "graders", REPO / "graders", course, REPO):
        path = folder / "conftest.py"
        assert not (path.exists() and token in path.read_text(errors="replace")), path
    for d in site_dirs():
        assert not (d / f"zz-{token}.pth").exists(), d
        custom = d / "sitecustomize.py"
        assert not (custom.exists() and token in custom.read_text(errors="replace")), custom
    assert not (Path("/tmp") / token).exists()
    # the next student, with errors of their own, is graded as usual
    nxt = with_code(wrong_nb(), "one_hot", ONE_HOT_SYNTAX_ERROR)
    got = scores(grade(nxt, use_bwrap=use_bwrap))
    assert got == {"test_embed": baseline["test_embed"], "test_one_hot": 0.0, "test_embed_backward": 3.0}


@requires_bwrap
def test_symlinks_planted_in_scratch_do_not_let_the_grader_overwrite_host_files(
    grade, baseline, hostile_course
):
    """Regression test for a fixed bug (sandbox escape), which was: after a worker crash, ``StudentProcess._spawn`` re-copies worker.py and
    codec.py into the scratch directory with ``shutil.copy``, following symlinks the student planted:
    here the course's own graders/<assignment>/01_embedding/checks.py gets overwritten with codec.py."""
    course = hostile_course.root
    victim = course / GRADERS.relative_to(REPO) / "01_embedding" / "checks.py"
    original = victim.read_bytes()
    code = f"""
import os
if os.path.exists('/sandbox/codec.py') and not os.path.islink('/sandbox/codec.py'):
    os.unlink('/sandbox/codec.py')
    os.symlink({str(victim)!r}, '/sandbox/codec.py')
    os._exit(0)
"""
    grade(wrong_nb(appended=(code,)), use_bwrap=True)
    assert victim.read_bytes() == original, "the grader overwrote the graders' 01_embedding/checks.py"
    result = grade(reference_nb(NB), use_bwrap=True, graders=course / GRADERS.relative_to(REPO))
    assert result.score == 7.0


def run_in_kernel(cells: list[str]):
    """nbgrader's execute step as configured (SandboxedExecute), on a small notebook of code cells."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(c)) for c in cells]
    try:
        out, _ = SandboxedExecute(timeout=20, notebook_timeout=60).preprocess(nb, {})
    finally:
        getattr(
            execute_step, "close_runner", lambda: None
        )()  # a failing preprocess leaves the module's runner (and its scratch) behind
    return out


def test_the_kernel_starts_without_the_debugger_and_is_the_runners_own():
    """The kernel is launched without debugpy (0.14-0.16 CPU-seconds of every start, for a debugger
    autograde never uses) and is still recognised as the runner's kernel: an ordinary notebook gets no
    note about processes left running, and the cells run as in JupyterLab (inline figures)."""
    out = run_in_kernel(
        [
            "import sys\nprint(sys.modules.get('debugpy', 'absent'))",
            "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
        ]
    )
    texts = [o.get("text", "") for c in out.cells for o in c.outputs if o.output_type == "stream"]
    assert texts == ["None\n"], texts
    assert [sorted(o.data) for o in out.cells[1].outputs] == [["image/png", "text/plain"]]


def test_a_students_next_notebook_starts_clean():
    """One kernel serves all notebooks of a student: the next notebook sees none of the previous one's
    names or open figures (same kernel process, checked by its pid)."""
    resources = {"nbgrader": {"assignment": "a", "student": "s"}}
    first, second = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    first.cells = [
        nbformat.v4.new_code_cell(
            "import os, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "x = 41\nfig = plt.figure()\nprint(os.getpid(), len(plt.get_fignums()))"
        )
    ]
    second.cells = [
        nbformat.v4.new_code_cell(
            "import os, matplotlib.pyplot as plt\nprint(os.getpid(), len(plt.get_fignums()), 'x' in dir())"
        )
    ]
    step = SandboxedExecute(timeout=20, notebook_timeout=60)
    try:
        first, _ = step.preprocess(first, dict(resources))
        second, _ = step.preprocess(second, dict(resources))
    finally:
        execute_step.close_runner()
    pid, figures = first.cells[0].outputs[0]["text"].split()
    assert figures == "1"
    assert second.cells[0].outputs[0]["text"].split() == [pid, "0", "False"]


@requires_bwrap
def test_executed_notebook_symlink_does_not_leak_host_files(tmp_path):
    """Regression test for a fixed bug (information leak), which was: the executed notebook is read back from the scratch directory with
    ``Path.is_file()`` / ``read_text()``, which follow a symlink the student's kernel planted there (here
    made to stick by also pointing nbexec's ``.tmp`` file at a read-only path, so its last write fails):
    any host notebook with as many cells, e.g. another student's autograded notebook, has its outputs
    copied into this student's autograded notebook and feedback."""
    secret = f"SECRET-{uuid.uuid4().hex}"
    victim = tmp_path / "other-student.ipynb"
    other = nbformat.v4.new_notebook()
    other.cells = [
        nbformat.v4.new_code_cell(
            "x", outputs=[nbformat.v4.new_output("stream", name="stdout", text=secret)]
        ),
        nbformat.v4.new_code_cell("y"),
    ]
    nbformat.write(other, victim)
    attack = f"""
        import glob, os
        outs = [p[: -len('.in.ipynb')] + '.out.ipynb' for p in glob.glob('/sandbox/*.in.ipynb')]
        for out in outs + ['/sandbox/out.ipynb']:
            for path, target in ((out + '.tmp', '/usr/pe-read-only/x'), (out, {str(victim)!r})):
                if os.path.lexists(path):
                    os.unlink(path)
                os.symlink(target, path)
        """
    out = run_in_kernel([attack, "print('hai')"])
    assert secret not in json.dumps(out), "another notebook's outputs were taken as this student's"


@requires_bwrap
def test_kernel_leftovers_in_scratch_cannot_break_the_execute_step():
    """Regression test for a fixed bug, which was: after each notebook the runner deletes ``nbN.*`` from its scratch directory with
    ``Path.unlink``; a directory the student's kernel created with such a name raises IsADirectoryError
    out of ``SandboxedExecute.preprocess`` and nbgrader drops the student's whole assignment."""
    attack = """
        import glob, os
        for p in glob.glob('/sandbox/*.in.ipynb'):
            stem = p[: -len('.in.ipynb')]
            for suffix in ('.out.ipynb.tmp', '.junk', '.out.ipynb.incomplete.d'):
                os.makedirs(stem + suffix + '/sub', exist_ok=True)
        print('ok')
        """
    out = run_in_kernel([attack, "print('hai')"])
    assert any("hai" in o.get("text", "") for o in out.cells[1].outputs)


# --------------------------------------------------------------------------------------------
# Through real nbgrader autograde: one run, hostile students first, then ordinary ones
# --------------------------------------------------------------------------------------------
OUTPUTS_CODE = """
print('3.0')
print('3')
display(3.0)
from IPython.display import publish_display_data, display as _display
publish_display_data({'text/plain': '3.0'})
_display({'text/plain': '3'}, raw=True)
import sys
sys.stdout.write('{"output_type": "execute_result", "data": {"text/plain": "3"}}\\n')
3.0
"""

AUTOGRADE_STUDENTS = ("h0_wrong", "h1_outputs", "h2_files", "h3_timeout", "h4_crash", "y_next", "z_correct")


def _tampered_test_cell(nb):
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "test_embed":
            cell.source = "3.0"  # a bare float: partial credit in plain nbgrader
            meta["points"] = 100
    return nb


@pytest.fixture(scope="module")
def autograded(_course_template, tmp_path_factory):
    """One ``nbgrader autograde`` run over hostile and ordinary students (bubblewrap only)."""
    if sandbox_module.bwrap_path() is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    import shutil

    root = tmp_path_factory.mktemp("hostile-course") / "course"
    shutil.copytree(_course_template, root)
    course = CourseCopy(root)
    token = f"pe-hostile-{uuid.uuid4().hex}"
    outputs_nb = _tampered_test_cell(wrong_nb(OUTPUTS_CODE))
    at = next(
        i
        for i, c in enumerate(outputs_nb.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_embed"
    )
    outputs_nb.cells.insert(at, nbformat.v4.new_code_cell(OUTPUTS_CODE))
    submissions = {
        "h0_wrong": wrong_nb(),
        "h1_outputs": outputs_nb,
        "h2_files": wrong_nb(appended=(hostile_files_code(root, token),)),
        "h3_timeout": wrong_nb(LOOP_IN_EMBED),
        "h4_crash": wrong_nb(EXIT_IN_EMBED, appended=(EXIT_AT_IMPORT,)),
        "y_next": with_code(wrong_nb(), "one_hot", ONE_HOT_SYNTAX_ERROR),
        "z_correct": reference_nb(NB),
    }
    for student, nb in submissions.items():
        course.submit(student, {NB: nb})
    before = {k: v for k, v in snapshot(root).items() if k.startswith(("graders", "source", "release"))}
    proc = course.nbgrader("autograde", "positional-encoding", "--ScoreWithGraders.call_timeout=3")
    after = {k: v for k, v in snapshot(root).items() if k.startswith(("graders", "source", "release"))}
    return {"course": course, "proc": proc, "token": token, "before": before, "after": after}


def _gradebook(course: CourseCopy, student: str) -> dict[str, float]:
    return {
        g: s
        for (st, nb, g), s in course.scores().items()
        if st == student and nb == NB and g.startswith("test_")
    }


def _record(course: CourseCopy, student: str) -> dict[str, float]:
    return {c["grade_id"]: c["score"] for c in course.record(student, NB)["cells"]}


@pytest.mark.slow
def test_autograde_run_completes(autograded):
    proc = autograded["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for student in AUTOGRADE_STUDENTS:
        assert (
            autograded["course"].root / "autograded" / student / "positional-encoding" / f"{NB}.ipynb"
        ).exists()


@pytest.mark.slow
@pytest.mark.parametrize("student", AUTOGRADE_STUDENTS)
def test_autograde_gradebook_equals_graders(autograded, student):
    course = autograded["course"]
    assert _gradebook(course, student) == _record(course, student)


@pytest.mark.slow
def test_autograde_hostile_students_earn_nothing_extra(autograded):
    course = autograded["course"]
    base = _gradebook(course, "h0_wrong")
    assert base == {"test_embed": 2.25, "test_one_hot": 1.0, "test_embed_backward": 3.0}
    for student in ("h1_outputs", "h2_files", "h3_timeout", "h4_crash"):
        got = _gradebook(course, student)
        assert got["test_embed"] <= base["test_embed"], (student, got)
        assert got["test_one_hot"] == 1.0 and got["test_embed_backward"] == 3.0, (student, got)


@pytest.mark.slow
def test_autograde_statuses_in_records(autograded):
    course = autograded["course"]
    status = {
        s: {c["grade_id"]: c["status"] for c in course.record(s, NB)["cells"]} for s in AUTOGRADE_STUDENTS
    }
    assert status["h3_timeout"]["test_embed"] == "timeout"
    assert status["h4_crash"]["test_embed"] == "crashed"
    assert any(e["error"] == "ProsesBerhenti" for e in course.record("h4_crash", NB)["cell_errors"])


@pytest.mark.slow
def test_autograde_hostile_files_left_nothing(autograded):
    course, token = autograded["course"], autograded["token"]
    assert autograded["after"] == autograded["before"]
    for d in site_dirs():
        assert not (d / f"zz-{token}.pth").exists(), d
        custom = d / "sitecustomize.py"
        assert not (custom.exists() and token in custom.read_text(errors="replace")), custom
    assert not (Path("/tmp") / token).exists()
    leaked = [str(p) for p in course.root.rglob("conftest.py") if token in p.read_text(errors="replace")]
    assert leaked == []
    # what the attack itself saw in the kernel (printed into its cell's output)
    nb = nbformat.read(
        course.root / "autograded" / "h2_files" / "positional-encoding" / f"{NB}.ipynb", as_version=4
    )
    seen = json.dumps(nb.cells[-1].get("outputs", []))
    assert "FileNotFoundError" in seen or "OperationalError" in seen, seen[:2000]
    for success in ("gradebook-written", "reference-found", f"'written', '{course.root}"):
        assert success not in seen, seen[:2000]


@pytest.mark.slow
def test_autograde_next_students_unaffected(autograded):
    course = autograded["course"]
    assert _gradebook(course, "z_correct") == {
        "test_embed": 3.0,
        "test_one_hot": 1.0,
        "test_embed_backward": 3.0,
    }
    assert _gradebook(course, "y_next") == {
        "test_embed": 2.25,
        "test_one_hot": 0.0,
        "test_embed_backward": 3.0,
    }


@pytest.mark.slow
def test_autograde_student_outputs_are_not_scores(autograded):
    """Bare ``3.0``, display(), publish_display_data and a tampered test cell never become the score."""
    course = autograded["course"]
    nb = nbformat.read(
        course.root / "autograded" / "h1_outputs" / "positional-encoding" / f"{NB}.ipynb", as_version=4
    )
    test_cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_embed")
    results = [o for o in test_cell.outputs if o.output_type == "execute_result"]
    assert [o.data["text/plain"] for o in results] == ["2.25"]
    assert test_cell.source.strip() != "3.0"
    assert _gradebook(course, "h1_outputs")["test_embed"] == 2.25
    # the student's own execute_results were turned into display data: only grade cells carry one
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        assert [o for o in cell.get("outputs", []) if o.output_type == "execute_result"] == []

"""Shared fixtures: a disposable copy of the course with a real nbgrader gradebook.

Nothing here mocks nbgrader, Jupyter or the sandbox: submissions are real notebooks graded by the
real ``nbgrader autograde`` (or ``pe_course.engine.grade`` through the real sandbox).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest

from pe_course.build.points_table import total_points
from pe_course.build.self_validation import reference_submission
from pe_course.course import Course, assignments
from pe_course.course.notebooks import load_reference
from pe_course.engine.discovery import load_suite
from pe_course.record import Note
from pe_course.sandbox import bwrap_path

REPO = Path(__file__).resolve().parents[1]

# The assignment these tests are about, named: the course may hold others (source/<assignment>/).
ASSIGNMENT = "positional-encoding"
COURSE = Course(REPO, ASSIGNMENT)
# What it holds, found as the package finds it: its notebooks from source/<assignment>/, its graded
# functions from its graders (graders/<assignment>/, in notebook order).
NOTEBOOKS = COURSE.notebooks
GRADERS = COURSE.graders
FUNCTIONS = tuple(fn for nb in NOTEBOOKS for fn in load_suite(GRADERS).notebooks.get(nb, []))
# Its maximum score, as the catalogue reads it from the notebooks' nbgrader metadata (the README's table).
TOTAL_POINTS = total_points(COURSE.source)


def bash_blocks(page: Path) -> list[str]:
    """The ```bash blocks of a Markdown page, in order."""
    return re.findall(r"```bash\n(.*?)\n```", page.read_text(encoding="utf-8"), flags=re.S)


def readme_test_command() -> str:
    """The README's command that installs and runs the tests (what `.ci/run` runs)."""
    return next(c for c in bash_blocks(REPO / "README.md") if "pytest" in c and "pip install" in c)


requires_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) is not installed")

# What bwrap prints where unprivileged user namespaces are off (Debian's kernel.unprivileged_userns_clone=0).
BWRAP_WITHOUT_USERNS = (
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces. On e.g. debian this can be enabled with "
    "'sysctl kernel.unprivileged_userns_clone=1'."
)


def path_without_bwrap(folder: Path, broken: bool = False) -> str:
    """A PATH for a machine without bubblewrap: this venv's bin, then every program of /usr/bin and /bin
    but bwrap. ``broken``: bwrap is there but cannot create its namespaces (user namespaces off)."""
    folder.mkdir(parents=True, exist_ok=True)
    for system in (Path("/usr/bin"), Path("/bin")):
        for program in system.iterdir():
            if program.name != "bwrap" and not (folder / program.name).exists():
                (folder / program.name).symlink_to(program)
    if broken:
        fake = folder / "bwrap"
        fake.write_text(f'#!/bin/sh\necho "{BWRAP_WITHOUT_USERNS}" >&2\nexit 1\n')
        fake.chmod(0o755)
    return f"{Path(sys.executable).parent}:{folder}"


# The fast tier (`pytest -m "not slow"`) is pure, single-process tests. A test that starts a sandbox,
# a kernel, an nbgrader app or a grading round is slow: whole modules below, and any test using one
# of these fixtures (so a new test that needs one is put in the slow tier without having to say so).
SLOW_MODULES = {
    "test_batch",
    "test_demo",
    "test_groups",
    "test_hostile",
    "test_instructor_round",
    "test_postgres",
    "test_report",
    "test_robustness",
    "test_sandbox",
    "test_self_validation",
    "test_distributed",
    "test_isolation_policy",
    "test_second_assignment",
    "test_shared_server",
}
SLOW_FIXTURES = {
    "built_clone",
    "course_copy",
    "make_course",
    "_course_template",
    "executed",
    "executed_release",
    "sandbox",
    "bwrap_sandbox",
    "grade",
    "hostile_course",
    "autograded",
    "cluster",
}


# Under pytest-xdist (the README's `pytest -n 3 --dist loadgroup`) each test goes to whichever worker is
# free, except the tests of these modules: they share module-scoped fixtures that take up to a minute and
# a half to build (a graded class, a released course, unix users), so each module runs on one worker.
# A test that shares a session fixture with another module says so with its own xdist_group mark.
ONE_WORKER_MODULES = {
    "test_batch",  # the class graded by stock nbgrader, once for the two tests comparing with it
    "test_contracts",
    "test_distributed",
    "test_hostile",
    "test_notebooks",
    "test_release",
    "test_report",
    "test_robustness",
    "test_round",  # tests/browser/: one JupyterLab server and one browser
    "test_second_assignment",
    "test_shared_server",
}
# The tests of these modules run in another module's group (on its worker, one after the other, never
# beside it). The JupyterHub round logs in the same unix users as the shared server's tests (pe-student1..3),
# so the two run one after the other on one worker; it ran alone after it lost a Ctrl-S in JupyterLab beside
# the other worker's tests (2026-12-05), and is back since `lab.save` presses Ctrl-S again while the tab
# stays dirty: alone, it left one of the two cores idle for its four minutes.
GROUPED_WITH: dict[str, str] = {"test_hub": "test_shared_server"}
# Started first, so that the longest runs do not begin when the other workers are nearly done (their
# lengths are in the slowest-durations list the README's command prints).
LONGEST_FIRST = (
    "test_shared_server",
    "test_demo",
    "test_round",
    "test_distributed",
    "test_docs",
    "test_batch",
    "test_types",  # mypy, 20-30 s of one core: not at the end, where it would hold the last worker
)


def pytest_configure(config):
    # pytest-xdist hands out groups biggest first unless told not to: keep the order sorted below, so that
    # the longest runs (LONGEST_FIRST) start first whatever the number of tests in their group.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(wrapper=True)  # its first half before every plugin's hook (pytest-xdist's), the rest after
def pytest_collection_modifyitems(config, items):
    for item in items:
        module = _module(item)
        if module in SLOW_MODULES or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if (
            module in ONE_WORKER_MODULES | GROUPED_WITH.keys()
            and item.get_closest_marker("xdist_group") is None
        ):
            item.add_marker(pytest.mark.xdist_group(GROUPED_WITH.get(module, module)))
    # the longest first; then the groups (a worker takes a group whole), and the single tests last, which
    # fill in while the other workers end their groups; stable: file order kept within
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    items.sort(
        key=lambda item: (
            rank.get(GROUPED_WITH.get(_module(item), _module(item)), len(rank)),
            item.get_closest_marker("xdist_group") is None,
        )
    )
    result = yield
    _take_xdist_groups(items)
    return result


def _take_xdist_groups(items) -> None:
    """Give each test the id pytest-xdist's ``--dist loadgroup`` names its group by ("<id>@<group>").

    pytest-xdist (3.8) writes that id to ``item._nodeid``, which pytest 9.2 no longer reads (a node's id
    is ``item._id`` there): no test was grouped, so every module- and session-scoped fixture of a grouped
    module was built on both workers (the guide's build, the hostile and robustness rounds: twice each,
    seen in the slowest durations of the 2026-12-04 CI run). Where pytest reads ``_nodeid`` itself, or
    pytest-xdist writes the id pytest reads, nothing is left to do here."""
    for item in items:
        grouped = vars(item).get("_nodeid")
        if isinstance(grouped, str) and grouped != item.nodeid and hasattr(item, "_id"):
            item._id = type(item._id).parse(grouped)


def _module(item) -> str:
    return item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) else ""


@pytest.fixture(scope="session")
def repo_course() -> Course:
    return COURSE


@pytest.fixture(scope="session")
def suite():
    return load_suite(GRADERS)


@pytest.fixture(scope="session")
def reference():
    return load_reference(REPO / "source" / "positional-encoding")


def reference_nb(name: str):
    """The notebook a student who wrote exactly the reference solution would submit."""
    return reference_submission(REPO / "source" / "positional-encoding" / f"{name}.ipynb")


def release_nb(name: str):
    """The untouched released notebook (stubs)."""
    return nbformat.read(REPO / "release" / "positional-encoding" / f"{name}.ipynb", as_version=4)


def with_code(nb, function: str, code: str):
    """Replace the solution cell of ``function`` with ``code`` (a student's answer)."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"solution_{function}":
            cell.source = code
            return nb
    raise KeyError(f"no solution cell for {function}")


def append_code(nb, code: str):
    """Add a code cell at the end (e.g. hostile code next to otherwise correct work)."""
    nb = nbformat.from_dict(nb)
    nb.cells.append(nbformat.v4.new_code_cell(code))
    return nb


def pe_course(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``pe-course ARGS`` run in ``root`` as an instructor runs it (no traceback allowed)."""
    exe = Path(sys.executable).with_name("pe-course")
    proc = subprocess.run(
        [str(exe), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def beside_the_notebooks(folder: Path, dest: Path) -> None:
    """What sits beside the notebooks in ``folder`` (data files, the public checks), copied to ``dest``
    as a student has it in JupyterLab (the notebooks themselves excepted)."""
    from pe_course.build.public_files import files_of
    from pe_course.course.datafiles import PUBLIC_DIR, data_files

    dest.mkdir(parents=True, exist_ok=True)
    for name, content in data_files(folder).items():
        (dest / name).write_bytes(content)
    (dest / PUBLIC_DIR).mkdir(exist_ok=True)
    for name, content in files_of(folder / PUBLIC_DIR).items():
        (dest / PUBLIC_DIR / name).write_bytes(content)


def notes_of(record: dict) -> list[str]:
    """A record's notes as "kind: detail" text (what the assertions read)."""
    return [str(Note.from_dict(n)) for n in record["notes"]]


class CourseCopy:
    """A scratch course directory: source/, release/, graders/, config and a fresh gradebook."""

    def __init__(self, root: Path, assignment: str = "positional-encoding") -> None:
        self.root = root
        self.course = Course(root, assignment)

    def submit(
        self, student: str, notebooks: dict[str, object], assignment: str = "positional-encoding"
    ) -> Path:
        """Put notebooks (name -> NotebookNode, or bytes/str for raw file content) into submitted/."""
        folder = self.root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for name, nb in notebooks.items():
            path = folder / f"{name}.ipynb"
            if isinstance(nb, bytes):
                path.write_bytes(nb)
            elif isinstance(nb, str):
                path.write_text(nb, encoding="utf-8")
            else:
                nbformat.write(nb, path)
        return folder

    def nbgrader(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        exe = Path(sys.executable).with_name("nbgrader")
        proc = subprocess.run(
            [str(exe), *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=540,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def record(self, student: str, notebook: str, assignment: str = "positional-encoding") -> dict:
        import json

        path = self.root / "autograded" / student / assignment / f"{notebook}.grading.json"
        return json.loads(path.read_text(encoding="utf-8"))

    def scores(self, assignment: str = "positional-encoding") -> dict[tuple[str, str, str], float]:
        """(student, notebook, grade_id) -> score, read from the gradebook with nbgrader's API."""
        out = {}
        with self.course.gradebook() as gb:
            for sub in gb.find_assignment(assignment).submissions:
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        out[(sub.student.id, nb.name, grade.name)] = grade.score
        return out


def run_folder(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this run shares (the run's base folder, whose sub-folders
    are the workers' own), or this session's own base folder without pytest-xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Held by one process at a time (an exclusive lock on ``path``, released when the block ends)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def _course_template(tmp_path_factory) -> Path:
    """One course copy with the assignment generated (and so in its gradebook), copied per test; made
    once per run: the first pytest-xdist worker to need it makes it, the other waits and takes the same
    one (nobody writes to it: tests copy it)."""
    root = run_folder(tmp_path_factory) / "course-template"
    with locked(root.with_name("course-template.lock")):
        if not root.is_dir():
            partial = root.with_name("course-template.partial")
            shutil.rmtree(partial, ignore_errors=True)  # what a failed attempt left
            others = [a for a in assignments(REPO) if a != ASSIGNMENT]  # a course of this one assignment
            for name in ("source", "graders"):
                ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", *others)
                shutil.copytree(REPO / name, partial / name, ignore=ignore)
            shutil.copy(REPO / "nbgrader_config.py", partial / "nbgrader_config.py")
            CourseCopy(partial).nbgrader("generate_assignment", "positional-encoding", "--force", check=True)
            partial.rename(root)
    return root


@pytest.fixture(scope="session")
def built_clone(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """What a fresh clone holds (no gradebook yet), after ``pe-course build``: the instructor guide's
    first step and the graders' self-validation, run once for the tests that read them (mark those
    ``xdist_group("built-clone")`` so that they share this one build under pytest-xdist)."""
    root = tmp_path_factory.mktemp("built") / "clone"
    for name in ("source", "release", "graders"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    shutil.copy(REPO / "nbgrader_config.py", root)
    return root, pe_course(root, "build")


@pytest.fixture
def course_copy(_course_template, tmp_path) -> CourseCopy:
    root = tmp_path / "course"
    shutil.copytree(_course_template, root)
    return CourseCopy(root)


@pytest.fixture
def make_course(_course_template, tmp_path) -> Callable[[str], CourseCopy]:
    def make(name: str) -> CourseCopy:
        root = tmp_path / name
        shutil.copytree(_course_template, root)
        return CourseCopy(root)

    return make


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two workers (w1, w2) as separate processes (``local_cluster.LocalCluster``)."""
    pytest.importorskip("distributed")
    from dask_stall_watch import STALL_SECONDS
    from local_cluster import LocalCluster

    from pe_course.sandbox.scratch import sweep_left_behind

    started = LocalCluster(tmp_path / "cluster")
    started.add_workers("w1", "w2")
    try:
        yield started
    finally:
        started.close()
        sweep_left_behind()  # the sandboxes of a worker killed outright
        # a stalled worker is a fault, but Dask recovers from it: said, not failed
        for worker, stacks in started.stalls().items():
            warnings.warn(
                f"Dask worker {worker}'s event loop stalled for {STALL_SECONDS} s or more; its threads "
                f"then:\n{stacks[:6000]}",
                stacklevel=1,
            )

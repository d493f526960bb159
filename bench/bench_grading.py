"""Benchmark: `pe-course grade --jobs 2` versus serial stock nbgrader, side by side, on two classes.

- **all-correct** (default 36 students): every student submits all four notebooks, every function
  correct but written differently — each solution cell is one of the correct implementations of
  ``graders/positional-encoding/<notebook>/alternatives.py`` (``@alternative``: loops, einsum, complex numbers, …; never the reference copied),
  mixed differently per student, and the written answers filled in.
- **mixed** (default 24 students): the demo's typical students (correct, partial, misconceptions,
  stubs, mangled and missing notebooks), without the two built to hang or wedge kernels.
- **one-notebook** (default 36 students): each hands in one notebook, correct and written as in the
  all-correct class (a course graded part by part, late resubmissions): the per-student fixed cost.
- **full-mistakes** (default 14 students): each hands in all four notebooks, written as in the
  all-correct class, one in three without mistakes, the others with one or two catalogued
  misconceptions, the sign bug in ``shift_encoding`` or a function left as the stub.

The baseline is stock nbgrader in a copy of the course with a stock ``nbgrader_config.py`` (course id,
stubs, ``Execute.timeout = 30``, rubrics allowed outside task cells): ``nbgrader autograde --force``
then ``nbgrader generate_feedback --force``, serial, the source notebooks' hidden asserts run in the
student's kernel, no sandbox. Ours is ``pe-course grade --force --jobs 2`` (sandbox, hidden graders,
each student's feedback made by the worker that grades them) on a copy with this
repository's ``nbgrader_config.py``. Both see the same submissions, one after the other.

Run it on an otherwise idle machine: ours keeps every core busy, so other load slows it more than the
serial baseline, and the machine-CPU figures (busy CPU seconds of the whole machine during each side,
sandboxed processes included) only mean something when nothing else runs. "Own CPU" counts only each
side's processes (stock: nbgrader and its kernels; ours: pe-course grade, its workers, and the
sandboxes' resource groups as the records give them), so it holds on a shared machine too (a busy
machine still inflates it somewhat). The load average is recorded before each side. After both sides,
the "floor": the same submissions run in plain kernels with nothing else (one kernel started afresh per
student, test cells empty), whose CPU, spread over the cores, is the least wall time any grader that
starts a fresh kernel per student can take (ours forks its kernels pre-imported, sandbox/inside/zygote.py, so
it can go below it); with ``--cluster`` the scheduler's and workers' process trees are added to our CPU.

    python bench/bench_grading.py                          # every class: times, ratios, scores
    python bench/bench_grading.py --classes one-notebook full-mistakes    # issue 23's two classes
    python bench/bench_grading.py --cluster 1 2 --students 12 --classes all-correct
        # pe-course grade --scheduler on a local `dask scheduler` with 1, then 2 `dask worker`s
    python bench/bench_grading.py --scaling-only --scaling 12 24 48 96   # how our wall time grows

Run by hand, not in the test suite. Prints a table and writes bench/results/grading-<date>.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from pe_course.cli import demo_class as demo  # noqa: E402
from pe_course.cli.demo import scratch_course  # noqa: E402
from pe_course.course import Course  # noqa: E402
from pe_course.round.grade import grade_round  # noqa: E402
from pe_course.runners.local import LocalRunner  # noqa: E402

warnings.filterwarnings("ignore", module="nbformat")  # the mangled students' duplicated cell ids

# A typical class: the demo's students without the ones built to hang (lina) or wedge kernels (indra),
# whose time-outs would dominate both sides.
TYPICAL = [s for s in demo.CLASS if s.login not in ("lina", "indra")]

STOCK_CONFIG = """\
import os
c = get_config()
c.CourseDirectory.course_id = "pe-course"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.ClearSolutions.code_stub = {"python": "# KODE ANDA DI SINI\\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "JAWABAN ANDA DI SINI"
c.Execute.timeout = 30
c.ClearMarkScheme.enforce_metadata = False  # plain nbgrader setting: the written answers' rubrics
"""
PE_COURSE = Path(sys.executable).with_name("pe-course")
DASK = Path(sys.executable).with_name("dask")


def _alternatives() -> dict:
    """The correct implementations of every graded function (``@alternative``), by function."""
    from pe_course.engine.discovery import load_suite

    return load_suite(Course(REPO).graders).alternatives


def _helpers(module, function, seen: set[str]) -> list[str]:
    """Names of the module's functions that ``function`` calls (also from nested functions), deepest first."""
    out: list[str] = []
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if inspect.iscode(c)]
        for name in code.co_names:
            helper = getattr(module, name, None)
            if inspect.isfunction(helper) and helper.__module__ == module.__name__ and name not in seen:
                seen.add(name)
                out += _helpers(module, helper, seen) + [name]
    return out


def _undecorated(function) -> str:
    """A function's source without the graders' declarations (``@alternative(...)``)."""
    return "".join(line for line in inspect.getsourcelines(function)[0] if not line.startswith("@"))


def correct_code(function: str, implementation) -> str:
    """A solution cell a student could have written: the implementation (renamed, without the
    graders' ``@alternative``) and its helpers."""
    module = sys.modules[implementation.__module__]
    helpers = _helpers(module, implementation, {implementation.__name__})
    parts = [_undecorated(getattr(module, name)) for name in helpers]
    own = _undecorated(implementation).replace(f"def {implementation.__name__}(", f"def {function}(", 1)
    return "\n\n".join(part.rstrip() for part in [*parts, own])


def all_correct_class(size: int) -> list[demo.Student]:
    """``size`` students, all correct, each mixing the alternatives differently."""
    alternatives = _alternatives()
    functions = sorted(alternatives)
    students = []
    for i in range(size):
        code = {}
        for k, function in enumerate(functions):
            options = alternatives[function]
            code[function] = correct_code(function, options[(i + k * (i // len(options) + 1)) % len(options)])
        students.append(demo.Student(f"benar{i:03d}", "all correct, varied", code, written=True))
    return students


def mixed_class(size: int) -> list[demo.Student]:
    return [TYPICAL[i % len(TYPICAL)] for i in range(size)]


def notebooks() -> list[str]:
    return sorted(p.stem for p in Course(REPO).release.glob("*.ipynb"))


def one_notebook_class(size: int) -> list[demo.Student]:
    """``size`` students who each handed in one notebook (the i-th student the (i mod 4)-th), correct and
    written differently, as in the all-correct class: a course graded part by part, or late resubmissions."""
    names = notebooks()
    return [
        dataclasses.replace(
            who,
            login=f"satu{i:03d}",
            story="one notebook, correct",
            missing=tuple(n for n in names if n != names[i % len(names)]),
        )
        for i, who in enumerate(all_correct_class(size))
    ]


def full_mistakes_class(size: int) -> list[demo.Student]:
    """``size`` students who each handed in all four notebooks, written differently (as in the all-correct
    class), with realistic mistakes: one student in three has none; the others one or two of the
    catalogued misconceptions, the sign bug in ``shift_encoding``, or a function left as the stub."""
    mistakes = sorted(demo.MISTAKES)
    students = []
    for i, who in enumerate(all_correct_class(size)):
        code = dict(who.code)
        if i % 3:
            for k in range(1 + i % 2):
                function, wrong = demo.MISTAKES[mistakes[(i + 3 * k) % len(mistakes)]]
                code[function] = wrong
            if i % 4 == 1:
                code["shift_encoding"] = demo.BUGGY_SHIFT
            if i % 5 == 2:
                code[demo.FUNCTIONS[i % len(demo.FUNCTIONS)]] = ""  # left as the stub
        students.append(
            dataclasses.replace(who, login=f"lengkap{i:03d}", story="all four, with mistakes", code=code)
        )
    return students


CLASSES = {
    "all-correct": (all_correct_class, 36),
    "mixed": (mixed_class, 24),
    "one-notebook": (one_notebook_class, 36),
    "full-mistakes": (full_mistakes_class, 14),
}


def make_course(root: Path, config: str | None, students: list[demo.Student]) -> Course:
    repo = Course(REPO)
    course = scratch_course(repo, root)
    if config is not None:
        (root / "nbgrader_config.py").write_text(config, encoding="utf-8")
    else:  # our config with the production limits, not the demo's shortened ones
        shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    run(course, "generate_assignment", course.assignment, "--force")
    release = Course(REPO).release
    for i, who in enumerate(students):
        folder = course.submitted / f"{who.login}{i:03d}" / course.assignment
        folder.mkdir(parents=True)
        for path in sorted(release.glob("*.ipynb")):
            if path.stem in who.missing:
                continue
            nb = demo.student_notebook(Course(REPO), path.stem, who)
            content = who.mangle[path.stem](nb) if path.stem in who.mangle else nb
            data = content if isinstance(content, bytes) else nbformat.writes(content).encode()
            (folder / path.name).write_bytes(data)
    return course


def run(course: Course, *args: str) -> float:
    exe = Path(sys.executable).with_name("nbgrader")
    started = time.monotonic()
    proc = subprocess.run([str(exe), *args], cwd=course.root, capture_output=True, text=True, check=False)
    if proc.returncode != 0 and args[0] == "generate_assignment":
        raise SystemExit(proc.stderr[-3000:])
    return time.monotonic() - started


def notebooks_submitted(course: Course) -> int:
    return sum(1 for _ in course.submitted.glob("*/*/*.ipynb"))


def auto_scores(course: Course) -> tuple[float, float]:
    """(sum of the autograded scores, their maximum) over the whole class, from the gradebook."""
    got = maximum = 0.0
    with course.gradebook() as gb:
        for sub in gb.find_assignment(course.assignment).submissions:
            got += sub.code_score
            maximum += sub.max_code_score
    return got, maximum


def busy_cpu_seconds() -> float:
    """CPU seconds this machine has spent busy (all processes, all cores) since boot. On an idle
    machine the difference over a run is what the run cost, sandboxed processes included."""
    import psutil

    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def children_cpu_seconds() -> float:
    """CPU seconds of this process's finished children and everything they waited for (nbgrader and
    its kernels; pe-course grade and its worker processes). Other work on the machine is not in it."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds of these processes and everything under them, running or waited for (a Dask
    worker's nanny, the worker it starts, their grading work; sandboxes are killed, not waited for:
    :func:`sandboxed_cpu_seconds` counts them)."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for proc in tree:
            try:
                t = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + t.children_user + t.children_system
    return total


def sandboxed_cpu_seconds(course: Course) -> float:
    """CPU seconds of our sandboxed runs (notebook runner and kernel, scoring worker), from the
    resource groups' figures in the records: they are killed, not waited for, so
    :func:`children_cpu_seconds` does not see them."""
    total = 0.0
    for path in course.autograded.glob("*/*/*.grading.json"):
        for figures in json.loads(path.read_text(encoding="utf-8")).get("resources", {}).values():
            total += float(figures.get("cpu_seconds", 0.0))
    return total


class PeakMemory:
    """Peak resident memory of process trees (sampled every 0.2 s): the sum over each tree and the largest
    single process."""

    def __init__(self, roots: list[int]) -> None:
        import psutil

        self.psutil, self.roots = psutil, roots
        self.tree_peak = {pid: 0 for pid in roots}
        self.process_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            for pid in self.roots:
                try:
                    root = self.psutil.Process(pid)
                    procs = [root, *root.children(recursive=True)]
                except self.psutil.Error:
                    continue
                sizes = []
                for proc in procs:
                    try:
                        sizes.append(proc.memory_info().rss)
                    except self.psutil.Error:
                        continue
                self.tree_peak[pid] = max(self.tree_peak[pid], sum(sizes))
                self.process_peak = max([self.process_peak, *sizes])

    def stop(self) -> PeakMemory:
        self._stop.set()
        self._thread.join()
        return self


def ours(course: Course, jobs: int, scheduler: str | None = None) -> dict:
    """`pe-course grade --force` as an instructor runs it (grading and feedback)."""
    argv = [str(PE_COURSE), "grade", course.assignment, "--force", "--jobs", str(jobs)]
    if scheduler:
        argv += ["--scheduler", scheduler]
    load_before = os.getloadavg()
    own = children_cpu_seconds()
    cpu = busy_cpu_seconds()
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=course.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    memory = PeakMemory([proc.pid])
    output, _ = proc.communicate()
    seconds = time.monotonic() - started
    cpu = busy_cpu_seconds() - cpu
    own = children_cpu_seconds() - own + sandboxed_cpu_seconds(course)
    memory.stop()
    graded = re.search(r"Graded (\d+), skipped \(unchanged\) (\d+), failed (\d+) in ([0-9.]+) s", output)
    if graded is None or int(graded.group(3)):
        print(f"  (pe-course grade said:)\n{output[-3000:]}")
    merged = re.search(r"Merged here .*?: ([0-9.]+) s, ([0-9.]+) s per student", output)
    round_s = float(graded.group(4)) if graded else None
    return {
        "seconds": round(seconds, 2),
        "round_seconds": round_s,  # pe-course's own figure: grading with feedback, start-up excluded
        "machine_cpu_s": round(cpu, 1),
        "own_cpu_s": round(own, 1),
        "merge_s_per_student": float(merged.group(2)) if merged else None,
        "failed": int(graded.group(3)) if graded else None,
        "peak_tree_mb": round(memory.tree_peak[proc.pid] / 1e6),
        "peak_process_mb": round(memory.process_peak / 1e6),
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


def stock(course: Course) -> dict:
    load_before = os.getloadavg()
    own = children_cpu_seconds()
    cpu = busy_cpu_seconds()
    autograde = run(course, "autograde", course.assignment, "--force")
    feedback = run(course, "generate_feedback", course.assignment, "--force")
    return {
        "seconds": round(autograde + feedback, 2),
        "autograde_s": round(autograde, 2),
        "feedback_s": round(feedback, 2),
        "machine_cpu_s": round(busy_cpu_seconds() - cpu, 1),
        "own_cpu_s": round(children_cpu_seconds() - own, 1),
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


def compare(name: str, students: list[demo.Student], jobs: int, tmp: Path) -> dict:
    base = make_course(tmp / f"{name}-stock", STOCK_CONFIG, students)
    mine = make_course(tmp / f"{name}-ours", None, students)
    n = notebooks_submitted(mine)
    print(f"[{name}] {len(students)} students, {n} notebooks submitted", flush=True)
    b = stock(base)
    b_got, b_max = auto_scores(base)
    print(
        f"[{name}] stock:  serial nbgrader autograde + generate_feedback: {b['seconds']:7.1f} s "
        f"(autograde {b['autograde_s']:.1f} + feedback {b['feedback_s']:.1f}; {b['autograde_s'] / n:.2f} s per "
        f"notebook autograded; machine CPU {b['machine_cpu_s']:.0f} s); auto scores {b_got:g}/{b_max:g}",
        flush=True,
    )
    o = ours(mine, jobs)
    o_got, o_max = auto_scores(mine)
    print(
        f"[{name}] ours:   pe-course grade --force --jobs {jobs}:            {o['seconds']:7.1f} s "
        f"(each student's feedback right after their grades; {o['seconds'] * jobs / n:.2f} s per notebook per "
        f"worker; machine CPU {o['machine_cpu_s']:.0f} s); auto scores {o_got:g}/{o_max:g}; peak memory {o['peak_tree_mb']} MB all processes, "
        f"{o['peak_process_mb']} MB largest",
        flush=True,
    )
    ratio = o["seconds"] / b["seconds"]
    cpu_ratio = o["machine_cpu_s"] / b["machine_cpu_s"] if b["machine_cpu_s"] else float("nan")
    own_ratio = o["own_cpu_s"] / b["own_cpu_s"] if b["own_cpu_s"] else float("nan")
    print(
        f"[{name}] ratio ours / stock = {ratio:.2f}; machine CPU per notebook: stock "
        f"{b['machine_cpu_s'] / n:.2f} s, ours {o['machine_cpu_s'] / n:.2f} s (ratio {cpu_ratio:.2f}); "
        f"own CPU per notebook (each side's processes only): stock {b['own_cpu_s'] / n:.2f} s, ours "
        f"{o['own_cpu_s'] / n:.2f} s (ratio {own_ratio:.2f}); load average before stock "
        f"{b['load_before'][0]:.2f}, before ours {o['load_before'][0]:.2f}",
        flush=True,
    )
    floor = kernel_floor(mine)
    cores = os.cpu_count() or 1
    least = floor["kernel_cpu_s"] / min(jobs, cores)
    print(
        f"[{name}] floor: the students' kernels alone (plain nbclient, one fresh kernel per student, test "
        f"cells empty; nothing else): {floor['kernel_cpu_s'] / n:.2f} s CPU per notebook; on {min(jobs, cores)} "
        f"cores no grader that starts a fresh kernel per student can take less than {least:.1f} s: ratio >= "
        f"{least / b['seconds']:.2f}; ours spends {(o['own_cpu_s'] - floor['kernel_cpu_s']) / len(students):+.2f} s "
        "CPU per student beside those kernels' (its kernels are forked pre-imported)",
        flush=True,
    )
    shutil.rmtree(base.root, ignore_errors=True)
    shutil.rmtree(mine.root, ignore_errors=True)
    return {
        "floor": {**floor, "least_seconds": round(least, 1), "least_ratio": round(least / b["seconds"], 3)},
        "students": len(students),
        "notebooks": n,
        "stock": {**b, "auto_score": b_got, "auto_max": b_max},
        "ours": {**o, "auto_score": o_got, "auto_max": o_max},
        "ratio": round(ratio, 3),
        "machine_cpu_per_notebook": {
            "stock": round(b["machine_cpu_s"] / n, 3),
            "ours": round(o["machine_cpu_s"] / n, 3),
        },
        "own_cpu_per_notebook": {"stock": round(b["own_cpu_s"] / n, 3), "ours": round(o["own_cpu_s"] / n, 3)},
    }


# What the student's kernel alone costs: a student's notebooks run one after the other in one plain
# kernel (launched as our runner launches it, namespace reset between notebooks, test cells emptied), with
# nothing else (no nbgrader, no sandbox, no graders, no feedback). Both sides must pay at least this
# per notebook to show the student their own outputs, so ``kernel CPU / cores`` is the least wall time
# any grader running the notebooks could take on this machine.
KERNEL_ONLY = """
import json, resource, sys
sys.modules["rfc3987_syntax"] = None
import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
sys.path.insert(0, sys.argv[1])
from pe_course.course.notebooks import is_test_cell
from pe_course.sandbox.inside.nbexec import RESET, lean_argv
folder, paths = sys.argv[2], sys.argv[3:]
km = KernelManager(kernel_name="python3")
km.kernel_spec.argv = lean_argv(km.kernel_spec.argv)  # launched as our runner launches it
km.start_kernel(cwd=folder, extra_arguments=["--HistoryManager.hist_file=:memory:"])
kc = km.client()
kc.start_channels()
kc.wait_for_ready(timeout=120)
errors = 0
for path in paths:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and is_test_cell(cell):
            cell.source = ""
    nb.cells.insert(0, nbformat.v4.new_code_cell(RESET))
    client = NotebookClient(nb, km=km, timeout=60, allow_errors=True)
    client.kc = kc
    client.execute(cleanup_kc=False)
    errors += sum(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))
kc.stop_channels()
km.shutdown_kernel(now=False)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"kernel_cpu_s": usage.ru_utime + usage.ru_stime, "errors": errors}))
"""


def kernel_floor(course: Course) -> dict:
    """The students' notebooks in plain kernels (one per student, serial): the kernels' CPU seconds."""
    release = course.release
    kernel = client = 0.0
    errors = 0  # cells that raised (a student's mistake or stub): their kernels' work is counted too
    started = time.monotonic()
    for folder in sorted(p for p in course.submitted.glob(f"*/{course.assignment}") if p.is_dir()):
        with tempfile.TemporaryDirectory(prefix="pe-floor-") as scratch:
            for data in release.glob("*.npz"):  # the data files the setup cells load
                shutil.copy(data, scratch)
            paths = []
            for nb in sorted(folder.glob("*.ipynb")):
                shutil.copy(nb, scratch)
                paths.append(str(Path(scratch) / nb.name))
            if not paths:
                continue
            before = children_cpu_seconds()
            proc = subprocess.run(
                [sys.executable, "-c", KERNEL_ONLY, str(REPO / "src"), scratch, *paths],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                raise SystemExit(f"kernel-only run failed for {folder}:\n{proc.stderr[-2000:]}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            found, errors = result["kernel_cpu_s"], errors + result["errors"]
            kernel += found
            client += children_cpu_seconds() - before - found
    return {
        "kernel_cpu_s": round(kernel, 1),
        "client_cpu_s": round(client, 1),
        "cells_with_errors": errors,
        "seconds": round(time.monotonic() - started, 1),
    }


class LocalCluster:
    """`dask scheduler` and `dask worker --nthreads 1` processes on this machine, in scratch directories."""

    def __init__(self, base: Path, workers: int) -> None:
        self.base = base
        self.procs: list[subprocess.Popen] = []
        base.mkdir(parents=True, exist_ok=True)
        scheduler_file = base / "scheduler.json"
        self._start(
            "scheduler",
            [
                str(DASK),
                "scheduler",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
        )
        while not scheduler_file.exists():
            time.sleep(0.2)
        self.address = json.loads(scheduler_file.read_text())["address"]
        for i in range(workers):
            self._start(
                f"w{i}",
                [
                    str(DASK),
                    "worker",
                    "--scheduler-file",
                    str(scheduler_file),
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--name",
                    f"w{i}",
                ],
            )
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=300)
        self.worker_pids = [p.pid for p in self.procs[1:]]

    def _start(self, name: str, argv: list[str]) -> None:
        folder = self.base / name
        folder.mkdir(exist_ok=True)
        self.procs.append(
            subprocess.Popen(
                argv,
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "TMPDIR": str(folder)},
                start_new_session=True,
            )
        )

    def close(self) -> None:
        for proc in reversed(self.procs):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def cluster_scaling(name: str, students: list[demo.Student], sizes: list[int], jobs: int, tmp: Path) -> dict:
    """pe-course grade --scheduler with 1, 2, … local dask workers on the same class."""
    out = {}
    for workers in sizes:
        course = make_course(tmp / f"{name}-cluster{workers}", None, students)
        cluster = LocalCluster(tmp / f"cluster{workers}", workers)
        try:
            memory = PeakMemory(cluster.worker_pids)
            cluster_cpu = tree_cpu_seconds([p.pid for p in cluster.procs])
            o = ours(course, jobs, scheduler=cluster.address)
            cluster_cpu = tree_cpu_seconds([p.pid for p in cluster.procs]) - cluster_cpu
            memory.stop()
        finally:
            cluster.close()
        # ours() counted pe-course grade and the sandboxes; the scheduler and workers are not its children
        o["own_cpu_s"] = round(o["own_cpu_s"] + cluster_cpu, 1)
        o["cluster_cpu_s"] = round(cluster_cpu, 1)
        got, maximum = auto_scores(course)
        per_worker = max(memory.tree_peak.values()) / 1e6
        per_student = o["round_seconds"] * workers / len(students)
        print(
            f"[{name}] dask, {workers} worker(s): {len(students)} students graded with their feedback in "
            f"{o['round_seconds']:.1f} s ({per_student:.2f} worker-seconds per student; {o['seconds']:.1f} s "
            "with start-up); "
            f"peak memory per worker (its sandboxes included) {per_worker:.0f} MB; merging {o['merge_s_per_student']} s "
            f"per student; peak memory of pe-course grade {o['peak_tree_mb']} MB; auto scores {got:g}/{maximum:g}; "
            f"CPU per student: {o['own_cpu_s'] / len(students):.2f} s all of ours (scheduler and workers "
            f"{o['cluster_cpu_s'] / len(students):.2f} s outside the sandboxes), machine "
            f"{o['machine_cpu_s'] / len(students):.2f} s",
            flush=True,
        )
        out[workers] = {
            **o,
            "worker_seconds_per_student": round(per_student, 2),
            "own_cpu_per_student": round(o["own_cpu_s"] / len(students), 3),
            "peak_worker_tree_mb": round(per_worker),
            "auto_score": got,
            "auto_max": maximum,
        }
        shutil.rmtree(course.root, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--classes", nargs="*", choices=list(CLASSES), default=list(CLASSES))
    parser.add_argument("--students", type=int, help="class size (default: 36 all-correct, 24 mixed)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--cluster",
        type=int,
        nargs="*",
        help="instead: pe-course grade --scheduler with these numbers of local dask workers",
    )
    parser.add_argument("--scaling", type=int, nargs="*", help="also time ours for these class sizes")
    parser.add_argument("--scaling-only", action="store_true", help="skip the side-by-side comparison")
    args = parser.parse_args()
    if os.getloadavg()[0] > 0.5:
        print(
            f"Note: load average {os.getloadavg()[0]:.1f}: other work is running; the figures will show it."
        )
    results: dict = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "jobs": args.jobs,
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="pe-bench-") as tmp:
        for name in args.classes:
            build, default = CLASSES[name]
            students = build(args.students or default)
            if args.cluster:
                results.setdefault("cluster", {})[name] = cluster_scaling(
                    name, students, args.cluster, args.jobs, Path(tmp)
                )
            elif not args.scaling_only:
                results.setdefault("classes", {})[name] = compare(name, students, args.jobs, Path(tmp))
        if args.scaling:
            _scaling(args, results, Path(tmp))
    results["load_average_after"] = os.getloadavg()
    _save(results)


def _scaling(args, results: dict, tmp: Path) -> None:
    results["scaling"] = {}
    for size in args.scaling or []:
        course = make_course(tmp / f"scale{size}", None, mixed_class(size))
        started = time.monotonic()
        summary = grade_round(course, LocalRunner(args.jobs), force=True)
        seconds = time.monotonic() - started
        if summary.failed:
            print(f"  (failed: {summary.failed})")
        results["scaling"][size] = round(seconds, 2)
        print(
            f"scaling: {size:3d} students: {seconds:7.1f} s ({seconds / size:.2f} s per student)", flush=True
        )
        shutil.rmtree(course.root, ignore_errors=True)


def _save(results: dict) -> None:
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    kind = "cluster" if "cluster" in results else "grading" if "classes" in results else "scaling"
    path = out / f"{kind}-{results['date'][:16].replace(':', '')}.json"
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"written {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

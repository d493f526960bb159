"""Benchmark: `pe-course grade --jobs 2` versus plain serial `nbgrader autograde`, side by side.

The baseline is stock nbgrader (its own Execute in the student's kernel, the source notebooks'
ordinary hidden asserts, no sandbox, no graders); ours runs every notebook in the sandbox and grades
it with the hidden graders (strictly more checking). Both grade the same synthetic class.

    python bench/bench_grading.py                 # 24 students: ratio, per-notebook cost
    python bench/bench_grading.py --scaling 12 24 48 96   # how our wall time grows (run by hand; long)

Run by hand, not in the test suite. Prints a table and writes bench/results/grading-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from pe_course import demo  # noqa: E402
from pe_course.batch import grade_round  # noqa: E402
from pe_course.course import Course  # noqa: E402

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
"""


def make_course(root: Path, config: str | None, students: int) -> Course:
    repo = Course(REPO)
    course = demo.scratch_course(repo, root)
    if config is not None:
        (root / "nbgrader_config.py").write_text(config, encoding="utf-8")
    else:  # our config with the production limits, not the demo's shortened ones
        shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    run(course, "generate_assignment", course.assignment, "--force")
    release = Course(REPO).release
    for i in range(students):
        who = TYPICAL[i % len(TYPICAL)]
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


def ours(course: Course, jobs: int) -> float:
    started = time.monotonic()
    summary = grade_round(course, jobs=jobs, force=True)
    if summary.failed:
        print(f"  (failed: {summary.failed})")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--scaling", type=int, nargs="*", help="also time ours for these class sizes")
    parser.add_argument("--scaling-only", action="store_true", help="skip the side-by-side comparison")
    args = parser.parse_args()
    results: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "students": args.students,
                     "jobs": args.jobs}
    with tempfile.TemporaryDirectory(prefix="pe-bench-") as tmp:
        if args.scaling_only:
            _scaling(args, results, Path(tmp))
            return _save(results)
        base = make_course(Path(tmp) / "baseline", STOCK_CONFIG, args.students)
        mine = make_course(Path(tmp) / "ours", None, args.students)
        n = notebooks_submitted(mine)
        print(f"{args.students} students, {n} notebooks submitted")
        t_base = run(base, "autograde", base.assignment, "--force")
        print(f"baseline: serial nbgrader autograde (in-kernel hidden asserts): {t_base:7.1f} s "
              f"({t_base / n:.2f} s per notebook)")
        t_ours = ours(mine, args.jobs)
        print(f"ours:     pe-course grade --jobs {args.jobs} (sandbox + hidden graders):   {t_ours:7.1f} s "
              f"({t_ours / n:.2f} s per notebook, {t_ours * args.jobs / n:.2f} s per notebook per worker)")
        ratio = t_ours / t_base
        print(f"ratio ours / baseline = {ratio:.2f}  (target <= 0.6)")
        results.update(notebooks=n, baseline_s=round(t_base, 2), ours_s=round(t_ours, 2), ratio=round(ratio, 3))
        if args.scaling:
            _scaling(args, results, Path(tmp))
    _save(results)


def _scaling(args, results: dict, tmp: Path) -> None:
    results["scaling"] = {}
    for size in args.scaling or []:
        course = make_course(tmp / f"scale{size}", None, size)
        seconds = ours(course, args.jobs)
        results["scaling"][size] = round(seconds, 2)
        print(f"scaling: {size:3d} students: {seconds:7.1f} s ({seconds / size:.2f} s per student)", flush=True)
        shutil.rmtree(course.root, ignore_errors=True)


def _save(results: dict) -> None:
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    kind = "scaling" if "baseline_s" not in results else "grading"
    path = out / f"{kind}-{results['date'][:10]}.json"
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"written {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

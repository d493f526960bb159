"""Where a one-notebook student's seconds go: ``grading_task.grade_one`` in one worker-like process.

Makes a course copy (this repository's config, production limits) where each student submitted one
notebook (an all-correct one, as in ``bench_grading.py``'s one-notebook class), builds the round's
template gradebook, then grades the students one after the other in this process, as a local worker
does (the first student pays the imports; the figures are the mean over the others). Each phase is
timed by wrapping the function that does it; ``--cprofile`` also prints cProfile's top entries for
the last student.

    python bench/profile_student.py                 # 5 students, one notebook each
    python bench/profile_student.py --students 8 --cprofile
    python bench/profile_student.py --class full-mistakes   # students who handed in all four notebooks
    PROFILE_SORT=tottime PROFILE_TOP=45 python bench/profile_student.py --students 1 --cprofile  # a cold worker

Run by hand, not in the test suite. Prints a table and writes bench/results/profile-<date>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import bench_grading  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)  # label -> wall seconds
CPU: dict[str, float] = defaultdict(float)  # label -> CPU seconds of this (the grading) process
SANDBOXES: list[float] = []  # CPU seconds of each resource group removed (a sandboxed run, all of it)


def timed(owner, name: str, label: str) -> None:
    """Wrap ``owner.name`` so its wall time adds to ``SPENT[label]`` (outermost call only)."""
    original = getattr(owner, name)
    depth = {"n": 0}

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        depth["n"] += 1
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            depth["n"] -= 1
            if depth["n"] == 0:
                SPENT[label] += time.perf_counter() - started
                CPU[label] += time.process_time() - cpu

    setattr(owner, name, wrapper)


def instrument() -> None:
    import nbgrader.apps.api as nbapi
    import nbgrader.converters.autograde as autograde
    import nbgrader.converters.base as converter_base
    import nbgrader.converters.generate_feedback as generate_feedback

    from pe_course import course
    from pe_course.round import task as grading_task
    from pe_course.sandbox import client, groups
    from pe_course.steps import execute, score
    from pe_course.steps import feedback_pages as feedback

    timed(course.Course, "config", "config (nbgrader_config.py loaded)")
    timed(nbapi.NbGraderAPI, "__init__", "NbGraderAPI built")
    timed(autograde.Autograde, "__init__", "Autograde app built")
    timed(autograde.Autograde, "init_single_notebook_resources", "autograde: gradebook per notebook")
    timed(autograde.Autograde, "init_assignment", "autograde: student's gradebook rows, files")
    timed(converter_base.BaseConverter, "write_single_notebook", "converters: notebook written")
    timed(converter_base.BaseConverter, "init_notebooks", "converters: finding notebooks")
    timed(autograde.Autograde, "start", "autograde total")
    timed(
        execute._Runner, "__init__", "execute: sandboxed runner started (the kernel starts with the notebook)"
    )
    timed(execute._Runner, "run", "execute: the notebook in the sandbox (kernel start, cells)")
    timed(score, "grade_notebook", "score: graders total")
    timed(client.StudentProcess, "start", "score: scoring worker start + load")
    timed(score, "load_reference", "score: reference loaded")
    timed(generate_feedback.GenerateFeedback, "__init__", "GenerateFeedback app built")
    timed(generate_feedback.GenerateFeedback, "start", "feedback total")
    timed(feedback, "tidy", "feedback: tidy")
    timed(grading_task, "grade_one", "grade_one total")

    original_remove = groups.ResourceGroup.remove

    def remove(self) -> None:  # every sandboxed process's CPU, from the group's creation to its end
        with contextlib.suppress(OSError):
            self.kill()
            SANDBOXES.append(self._cpu_total())
        original_remove(self)

    groups.ResourceGroup.remove = remove  # type: ignore[method-assign]
    timed(grading_task.shutil, "copy", "private gradebook copied")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=5)
    parser.add_argument("--class", dest="klass", choices=list(bench_grading.CLASSES), default="one-notebook")
    parser.add_argument("--cprofile", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    from pe_course.round import task as grading_task
    from pe_course.round.task import GradeTask, build_template

    students = bench_grading.CLASSES[args.klass][0](args.students)
    with tempfile.TemporaryDirectory(prefix="pe-profile-") as tmp:
        course = bench_grading.make_course(Path(tmp) / "course", None, students)
        work = course.state_dir / "work" / "profile"
        work.mkdir(parents=True)
        template = build_template(course, work / "template.db")
        instrument()
        logins = sorted(p.name for p in course.submitted.iterdir())
        per_student: list[dict[str, Any]] = []
        profiler = None
        for i, login in enumerate(logins):
            SPENT.clear()
            CPU.clear()
            SANDBOXES.clear()
            if args.cprofile and i == len(logins) - 1:
                profiler = cProfile.Profile()
                profiler.enable()
            task = GradeTask(
                str(course.root),
                course.assignment,
                login,
                str(template),
                str(work / login),
                "",
                feedback=True,
            )
            started = time.perf_counter()
            outcome = grading_task.grade_one(task)
            wall = time.perf_counter() - started
            if profiler is not None:
                profiler.disable()
            if not (outcome.ok and outcome.feedback):
                raise SystemExit(f"{login}: {outcome.error}")
            sandboxed = {"whole runs": sum(SANDBOXES)}  # and as the student's records keep it:
            for record in (work / login / "autograded").glob("*/*/*.grading.json"):
                for step, figures in json.loads(record.read_text())["resources"].items():
                    sandboxed[step] = sandboxed.get(step, 0.0) + figures["cpu_seconds"]
            per_student.append(
                {
                    "student": login,
                    "wall": wall,
                    **{f"sandboxed CPU ({step})": v for step, v in sandboxed.items()},
                    "grading_process_cpu": CPU["grade_one total"],
                    **{k: [v, CPU[k]] for k, v in SPENT.items()},
                }
            )
            print(
                f"{login}: {wall:.2f} s, {CPU['grade_one total']:.2f} s CPU here, {sandboxed['whole runs']:.2f} s CPU in sandboxes",
                flush=True,
            )
            shutil.rmtree(work / login)
    warm = per_student[1:] or per_student
    labels = [k for k in per_student[-1] if k not in ("student",)]

    def mean_of(k: str, i: int) -> float:
        return sum((s[k][i] if isinstance(s[k], list) else s[k]) for s in warm if k in s) / len(warm)

    mean = {
        k: [mean_of(k, 0), mean_of(k, 1)] if isinstance(per_student[-1][k], list) else mean_of(k, 0)
        for k in labels
    }
    print(f"\nmean over students 2..{len(per_student)} (a warm worker): wall s, CPU s of the grading process")
    for k in labels:
        v = mean[k]
        print(f"  {k:45s} " + (f"{v[0]:6.3f} {v[1]:6.3f}" if isinstance(v, list) else f"{v:6.3f}"))
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(
            os.environ.get("PROFILE_SORT", "cumulative")
        ).print_stats(int(os.environ.get("PROFILE_TOP", "60")))
        print(out.getvalue())
    result = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python", *sys.argv]),
        "class": args.klass,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "students": per_student,
        "mean_warm": mean,
    }
    path = REPO / "bench" / "results" / f"profile-{result['date'][:16].replace(':', '')}.json"
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"written {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

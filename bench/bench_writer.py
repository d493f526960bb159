"""Benchmark: the single gradebook writer, per merged student, from the first students to a large class.

A grading round has exactly one writer (``pe_course.round.merge.finish``: the merge into the course
gradebook, the autograded files moved into place, the resumable state, the attention check). Every
worker's result passes through it, so its cost per student bounds how many workers a round can use.
This times it alone, on **synthetic results** — no grading: each synthetic student is what a worker
sends back (a private SQLite gradebook with auto scores and comments for every cell, the autograded
notebooks and their ``.grading.json`` records), made once with nbgrader's API and copied per student.

    python bench/bench_writer.py                         # 2,000 students, SQLite
    python bench/bench_writer.py --students 10000        # the figure for a very large class
    python bench/bench_writer.py --postgres postgresql://postgres:pe-course@127.0.0.1:5432/postgres

Reports seconds per student in windows (first 100, ..., last 100), so growth with the gradebook's
size shows; writes bench/results/writer-<date>.json. Run by hand, not in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from pe_course.course import Course  # noqa: E402
from pe_course.round.merge import finish, settle  # noqa: E402
from pe_course.round.resume import GradeState  # noqa: E402
from pe_course.round.summary import RoundSummary  # noqa: E402
from pe_course.round.writer import GradebookWriter  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
from synthetic import prototype, synthetic  # noqa: E402  (the tests build the same results)


def scratch_course(base: Path, db_url: str | None) -> Course:
    root = base / "course"
    for name in ("source", "release", "graders"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    if db_url:
        config += f"\nc.CourseDirectory.db_url = {db_url!r}\n"
    (root / "nbgrader_config.py").write_text(config, encoding="utf-8")
    nbgrader = Path(sys.executable).with_name("nbgrader")
    subprocess.run(
        [str(nbgrader), "generate_assignment", "positional-encoding", "--force"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return Course(root)


def measure(course: Course, students: int, window: int, work: Path, batched: bool) -> dict:
    """Merge ``students`` synthetic results. ``batched``: they are all waiting (a large cluster: the
    writer commits up to MAX_BATCH at once); otherwise each arrives alone (one commit per student)."""
    proto = prototype(course, work)
    outcomes = [
        synthetic(course, proto, f"s{i:06d}", work / "staging" / f"s{i:06d}") for i in range(1, students + 1)
    ]
    summary = RoundSummary()
    state = GradeState(course)
    windows: list[dict] = []
    started = mark = time.perf_counter()
    with GradebookWriter(course) as writer:
        for i, outcome in enumerate(outcomes, 1):
            finish(writer, outcome, state, summary, lambda *a: None, settle_now=not batched)
            if i % window == 0 or i == students:
                if batched and i == students:
                    settle(writer, state, summary, lambda *a: None)
                now = time.perf_counter()
                done = i - (windows[-1]["merged"] if windows else 0)
                windows.append({"merged": i, "seconds_per_student": (now - mark) / done})
                mark = now
                print(
                    f"  {i:>6}: {windows[-1]['seconds_per_student'] * 1000:7.1f} ms per student", flush=True
                )
    total = time.perf_counter() - started
    assert len(summary.graded) == students and not summary.failed, summary.failed
    with course.gradebook() as gb:
        merged = len(gb.find_assignment(course.assignment).submissions)
    assert merged == students, merged
    assert len(GradeState(course).data) == students
    return {
        "students": students,
        "seconds": total,
        "seconds_per_student": total / students,
        "windows": windows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=2000)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--postgres", metavar="URL", help="also on this (empty, scratch) PostgreSQL database")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    results = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "load_before": os.getloadavg()[0],
    }
    targets = [("sqlite", None)] + ([("postgresql", args.postgres)] if args.postgres else [])
    for name, url in targets:
        for batched in (True, False):
            label = f"{name}, {'results waiting (batched commits)' if batched else 'one commit per student'}"
            with tempfile.TemporaryDirectory(prefix="pe-bench-writer-") as tmp:
                if url:
                    _empty_postgres(url)
                course = scratch_course(Path(tmp), url)
                print(f"{label}: {args.students} synthetic students", flush=True)
                result = measure(course, args.students, args.window, Path(tmp), batched)
                results[f"{name}-{'batched' if batched else 'single'}"] = result
                print(
                    f"{label}: {result['seconds_per_student'] * 1000:.1f} ms per student overall", flush=True
                )
    out = REPO / "bench" / "results" / f"writer-{datetime.now(timezone.utc):%Y-%m-%dT%H%M}.json"
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"written: {out.relative_to(REPO)}")


def _empty_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as con:
        con.execute(text("DROP SCHEMA public CASCADE"))
        con.execute(text("CREATE SCHEMA public"))
    engine.dispose()


if __name__ == "__main__":
    main()

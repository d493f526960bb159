"""Benchmark: the time the hidden graders add per notebook over nbgrader's own execution.

For every notebook of a synthetic class (the demo's typical students), measured side by side in one
invocation, each phase in its own process (so peak memory is attributed to it):

- ``execute``: nbgrader's own ``Execute`` preprocessor (the student's kernel, no sandbox) — the baseline;
- ``sandboxed-execute``: our ``SandboxedExecute`` (nbclient + kernel inside bubblewrap);
- ``graders``: ``grade_notebook`` — the sandboxed worker running the submission's code plus every
  check and misconception diagnosis — i.e. the extra work the graders add to autograding.

    python bench/bench_graders.py [--students 10]
    python bench/bench_graders.py --against ../other-checkout --rounds 3   # graders before/after, one run

Prints medians per notebook and peak RSS of the grading processes. Target: median graders time
<= 0.3 s per notebook on the 2-core machine. ``--against DIR`` also times the graders of another
checkout of this repository (e.g. ``git worktree add ../before main``) on its own release of the
same synthetic class, alternating the two ``--rounds`` times so that the machine's drift hits both
alike, and prints the ratio. Run by hand, not in the test suite.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def notebooks(students: int):
    import nbformat

    from pe_course.cli import demo_class as demo
    from pe_course.course import Course

    course = Course(REPO)
    typical = [s for s in demo.CLASS if s.login not in ("lina", "indra")]
    for i in range(students):
        who = typical[i % len(typical)]
        for path in sorted(course.release.glob("*.ipynb")):
            if path.stem in who.missing or path.stem in who.mangle:
                continue
            yield path.stem, nbformat.from_dict(demo.student_notebook(course, path.stem, who))


def phase(name: str, students: int) -> dict:
    import copy

    times = []
    if name == "graders":
        from pe_course.course import Course
        from pe_course.course.notebooks import load_reference
        from pe_course.engine import grade_notebook
        from pe_course.engine.discovery import load_suite
        from pe_course.sandbox import Sandbox

        suite, reference, sandbox = (
            load_suite(Course(REPO).graders),
            load_reference(REPO / "source" / "positional-encoding"),
            Sandbox(),
        )
        warm = next(notebooks(1))
        grade_notebook(
            warm[1], warm[0], suite, reference, sandbox
        )  # process start-up: imports, cached inputs
        for nb_id, nb in notebooks(students):
            started = time.perf_counter()
            grade_notebook(nb, nb_id, suite, reference, sandbox)
            times.append(time.perf_counter() - started)
    else:
        from nbgrader.preprocessors import Execute

        from pe_course.steps.execute import SandboxedExecute

        for _nb_id, nb in notebooks(students):
            nb = copy.deepcopy(nb)
            started = time.perf_counter()
            if name == "execute":
                Execute(timeout=30).preprocess(nb, {"metadata": {"path": "/tmp"}})
            else:
                SandboxedExecute(timeout=30).preprocess(nb, {})
            times.append(time.perf_counter() - started)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "phase": name,
        "notebooks": len(times),
        "median_s": statistics.median(times),
        "mean_s": statistics.fmean(times),
        "max_s": max(times),
        "total_s": sum(times),
        "peak_rss_mb_self": round(own, 1),
        "peak_rss_mb_children": round(children, 1),
    }


def _phase(script: Path, name: str, students: int) -> dict:
    out = subprocess.run(
        [sys.executable, str(script), "--phase", name, "--students", str(students)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def against(other: Path, students: int, rounds: int) -> dict:
    """The graders phase of this checkout and of ``other``, alternated ``rounds`` times."""
    runs: dict[str, list[dict]] = {"this": [], "other": []}
    for _ in range(rounds):
        runs["other"].append(_phase(other / "bench" / "bench_graders.py", "graders", students))
        runs["this"].append(_phase(Path(__file__), "graders", students))
    summary = {}
    for side, results in runs.items():
        medians = [r["median_s"] for r in results]
        totals = [r["total_s"] for r in results]
        summary[side] = {
            "notebooks": results[0]["notebooks"],
            "median_s_per_round": medians,
            "total_s_per_round": totals,
            "median_s": statistics.median(medians),
            "total_s": statistics.median(totals),
        }
    summary["ratio_total"] = summary["this"]["total_s"] / summary["other"]["total_s"]
    summary["ratio_median"] = summary["this"]["median_s"] / summary["other"]["median_s"]
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--against", type=Path, help="another checkout whose graders to time alongside")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.students)))
        return
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    if args.against:
        summary = against(args.against.resolve(), args.students, args.rounds)
        for side, name in (("other", str(args.against)), ("this", "this checkout")):
            r = summary[side]
            print(
                f"{name:<40} {r['notebooks']:>4} notebooks  graders total {r['total_s']:.2f} s "
                f"(per round {', '.join(f'{t:.2f}' for t in r['total_s_per_round'])}), "
                f"median {r['median_s']:.3f} s per notebook"
            )
        print(
            f"this / other: total {summary['ratio_total']:.3f}, median per notebook {summary['ratio_median']:.3f}"
        )
        stamp = time.strftime("%Y-%m-%dT%H%M", time.gmtime())
        (out / f"graders-against-{stamp}.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        return
    rows = {
        name: _phase(Path(__file__), name, args.students)
        for name in ("execute", "sandboxed-execute", "graders")
    }
    print(
        f"{'phase':<20}{'notebooks':>10}{'median s':>10}{'mean s':>9}{'max s':>8}{'peak RSS MB (self / children)':>32}"
    )
    for r in rows.values():
        print(
            f"{r['phase']:<20}{r['notebooks']:>10}{r['median_s']:>10.3f}{r['mean_s']:>9.3f}{r['max_s']:>8.2f}"
            f"{r['peak_rss_mb_self']:>16.0f} / {r['peak_rss_mb_children']:.0f}"
        )
    base, sand, graders = rows["execute"], rows["sandboxed-execute"], rows["graders"]
    print(
        f"\ngraders add a median {graders['median_s']:.3f} s per notebook (target <= 0.3 s) over nbgrader's own "
        f"execution ({base['median_s']:.2f} s);\nthe sandboxed execution costs a median "
        f"{sand['median_s'] - base['median_s']:+.2f} s per notebook over the unsandboxed one."
    )
    (out / "graders-overhead.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

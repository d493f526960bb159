"""``pe-course demo``: a whole grading round on a synthetic class, in a scratch course directory.

The class (:mod:`.demo_class`) is handed over as an LMS bulk-download zip, taken in with
``nbgrader zip_collect``, graded, exported and reported, as an instructor's round would be.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from ..course import Course
from ..lms.intake import canvas_name, lms_zip
from .demo_class import ASSIGNMENT, CLASS, student_notebook
from .round_commands import write_report_if_possible
from .terminal import console, isolation_line


def build_lms_zip(course: Course, path: Path) -> Path:
    """The class's notebooks as a Canvas-style bulk download (some files renamed as students do)."""
    files: dict[str, bytes] = {}
    for number, student in enumerate(CLASS, start=1):
        for nb_number, notebook in enumerate(sorted(p.stem for p in course.release.glob("*.ipynb"))):
            if notebook in student.missing:
                continue
            nb = student_notebook(course, notebook, student)
            content = student.mangle[notebook](nb) if notebook in student.mangle else nb
            data = content if isinstance(content, bytes) else nbformat.writes(content).encode()
            file_name = f"{notebook}-1.ipynb" if (number + nb_number) % 5 == 0 else f"{notebook}.ipynb"
            files[
                canvas_name(
                    student.login,
                    1000 + number,
                    5000 + 10 * number + nb_number,
                    file_name,
                    late=student.login == "kiki",
                )
            ] = data
    return lms_zip(path, files)


def scratch_course(repo: Course, out: Path) -> Course:
    """A copy of the course (source, graders, config) in ``out`` with demo time limits."""
    out.mkdir(parents=True, exist_ok=True)
    for name in ("source", "graders"):
        shutil.copytree(
            repo.root / name,
            out / name,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"),
        )
    config = (repo.root / "nbgrader_config.py").read_text(encoding="utf-8")
    config += (
        "\n# pe-course demo: shorter limits so the code that hangs costs seconds, not minutes.\n"
        "c.Execute.timeout = 5\nc.ScoreWithGraders.call_timeout = 3\n"
        "c.SandboxedExecute.notebook_timeout = 40\nc.ScoreWithGraders.notebook_timeout = 60\n"
    )
    (out / "nbgrader_config.py").write_text(config, encoding="utf-8")
    return Course(out, repo.assignment)


def nbgrader_cli(course: Course, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("nbgrader")
    return subprocess.run([str(exe), *args], cwd=course.root, capture_output=True, text=True, check=False)


def cmd_demo(args) -> int:
    import time

    from ..build.release import refresh_release
    from ..build.self_validation import run_selfcheck
    from ..runners.local import LocalRunner
    from ..sandbox import Sandbox
    from .grading import print_round, run_grading

    started = time.monotonic()
    repo = Course.here(args.course or _repo_guess(), ASSIGNMENT)
    line = isolation_line(False, trusted="synthetic students")
    assert line is not None  # the project's own code may run without bubblewrap
    console.print(line)  # the first line: whether the demo's students run isolated
    out = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="pe-course-demo-"))
    console.rule("pe-course demo")
    console.print(f"Scratch course directory: [bold]{out}[/]")
    course = scratch_course(repo, out)
    with console.status("Releasing (nbgrader generate_assignment) and checking the graders…"):
        refresh_release(course)
        check = run_selfcheck(course, Sandbox(unisolated=True), students=False)
    console.print(
        f"1. Release generated; graders' check: {'passed' if check.ok else 'FAILED'} "
        f"(the reference solutions full marks, the released stubs 0, in {len(course.notebooks)} notebooks; "
        "pe-course build also grades every catalogued mistake)"
    )
    for problem in check.problems:
        console.print(f"   [red]- {problem}[/]")
    archive = build_lms_zip(
        course, course.root / "downloaded" / course.assignment / "archive" / "lms-download.zip"
    )
    console.print(
        f"2. Synthetic class of {len(CLASS)} students as an LMS download: {archive.relative_to(out)}"
    )
    for student in CLASS:
        console.print(f"     {student.login:<6} {student.story}")
    collected = nbgrader_cli(course, "zip_collect", course.assignment, "--force")
    if collected.returncode != 0:
        console.print(f"[red]nbgrader zip_collect failed[/]\n{collected.stderr[-2000:]}")
        return 1
    console.print(f"3. nbgrader zip_collect → {len(list(course.submitted.iterdir()))} students in submitted/")
    console.print(f"4. Grading in parallel (pe-course grade --jobs {args.jobs}) and generating feedback:")
    summary, feedback_failures = run_grading(course, LocalRunner(args.jobs), force=True, unisolated=True)
    exported = nbgrader_cli(course, "export", "--to", str(course.root / "grades.csv"))
    console.print(
        f"5. Grades exported with nbgrader export → grades.csv "
        f"({'ok' if exported.returncode == 0 else 'failed'})"
    )
    print_round(course, summary, feedback_failures)
    report = write_report_if_possible(course)
    console.print(f"6. Report: [bold]{report}[/]" if report else "6. Report: not available")
    console.print(f"Feedback for students: {course.feedback}")
    console.print(
        f"Done in {time.monotonic() - started:.0f} s. Grade the written answers: cd {out} && "
        "pe-course formgrader, then pe-course feedback"
    )
    return 0 if check.ok and not feedback_failures else 1


def _repo_guess() -> Path:
    """The clone this package was installed from (editable installs), else the working directory."""
    here = Path(__file__).resolve().parents[3]  # src/pe_course/cli/demo.py -> the clone
    return here if (here / "nbgrader_config.py").is_file() else Path.cwd()

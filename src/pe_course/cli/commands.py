"""The ``pe-course`` command: thin over nbgrader's own apps and API."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ..course import Course, UnknownAssignment
from ..interruption import catch_signals, deferred
from .admin import add_check_sandbox, add_opt_outs, add_setup_groups, cmd_check_sandbox, cmd_setup_groups
from .help import add_command
from .terminal import console, isolation_line, progress


def cmd_release(args) -> int:
    from ..release import release_diff

    course = _course(args)
    if args.check:
        differ = release_diff(course)
        if differ:
            console.print(
                f"[red]release/ is out of date[/]: {', '.join(differ)} — run `pe-course release` "
                "(guide: docs/authoring.md#adding-a-notebook-or-an-assignment)"
            )
            return 1
        console.print("release/ matches a fresh `nbgrader generate_assignment`.")
        return 0
    path = _release(course)
    if path is None:
        return 1
    console.print(f"Released {len(list(path.glob('*.ipynb')))} notebooks to {path.relative_to(course.root)}")
    return 0


def _release(course: Course) -> Path | None:
    """Regenerate release/ (with its safety checks); None, after saying why, when it refuses."""
    from ..release import ReleaseError, refresh_release

    try:
        return refresh_release(course)
    except ReleaseError as exc:
        console.print(f"[red]{exc}[/]")
        return None


def _course(args) -> Course:
    """The course directory and the assignment named on the command line (the only one if none is);
    an unknown assignment raises :class:`UnknownAssignment`, which :func:`main` prints in one line."""
    return Course.here(args.course, getattr(args, "assignment", None))


def _assignment_ready(course: Course) -> bool:
    """The assignment's gradebook entry exists (added from source/ if not)."""
    from nbgrader.api import MissingEntry

    try:
        with course.gradebook() as gb:
            gb.find_assignment(course.assignment)
        return True
    except MissingEntry:
        pass
    console.print(
        f"The gradebook has no {course.assignment!r} yet (a fresh clone?): adding it from "
        "source/ with nbgrader generate_assignment."
    )
    return _release(course) is not None


def cmd_build(args) -> int:
    from ..sandbox import Sandbox
    from ..selfcheck import released_stubs, run_selfcheck

    course = _course(args)
    line = isolation_line(False, trusted="reference solutions, stubs and misconceptions")
    assert line is not None  # the project's own code may run without bubblewrap
    console.print(line)
    sandbox = Sandbox(unisolated=True)  # bubblewrap when it works (the line above says which)
    with (
        tempfile.TemporaryDirectory(prefix="pe-course-build-") as scratch,
        console.status("Self-validating the graders (reference, stubs, misconceptions)…"),
    ):
        report = run_selfcheck(course, sandbox, released_stubs(course, Path(scratch)))
    table = Table("check", "subject", "result", title="Graders' self-validation")
    for row in report.rows:
        table.add_row(*row)
    console.print(table)
    if not report.ok:
        console.print("[red]Refusing to release:[/]")
        for problem in report.problems:
            console.print(f"  - {problem}")
        return 1
    path = _release(course)
    if path is None:
        return 1
    console.print(f"[green]Self-validation passed[/]; released to {path.relative_to(course.root)}")
    return 0


def _opted_in(course: Course) -> tuple[bool, bool]:
    from ..sandbox.policy import ungrouped_allowed, unisolated_allowed

    config = course.config()
    return unisolated_allowed(config), ungrouped_allowed(config)


def cmd_grade(args) -> int:
    from .round_output import grade_command

    course = _course(args)
    unisolated, ungrouped = _opted_in(course)
    return grade_command(
        course,
        args,
        args.unisolated or unisolated,
        _assignment_ready,
        ungrouped=args.without_resource_groups or ungrouped,
    )


def cmd_demo(args) -> int:
    import time

    from ..release import refresh_release
    from ..sandbox import Sandbox
    from ..selfcheck import run_selfcheck
    from . import demo
    from .round_output import print_round, run_grading

    started = time.monotonic()
    repo = Course.here(args.course or _repo_guess(), demo.ASSIGNMENT)
    line = isolation_line(False, trusted="synthetic students")
    assert line is not None  # the project's own code may run without bubblewrap
    console.print(line)  # the first line: whether the demo's students run isolated
    out = Path(args.out).resolve() if args.out else Path(tempfile.mkdtemp(prefix="pe-course-demo-"))
    console.rule("pe-course demo")
    console.print(f"Scratch course directory: [bold]{out}[/]")
    course = demo.scratch_course(repo, out)
    with console.status("Releasing (nbgrader generate_assignment) and self-validating the graders…"):
        refresh_release(course)
        check = run_selfcheck(course, Sandbox(unisolated=True))
    console.print(
        f"1. Release generated; graders' self-validation: {'passed' if check.ok else 'FAILED'} "
        f"({len(check.rows)} checks)"
    )
    for problem in check.problems:
        console.print(f"   [red]- {problem}[/]")
    archive = demo.build_lms_zip(
        course, course.root / "downloaded" / course.assignment / "archive" / "lms-download.zip"
    )
    console.print(
        f"2. Synthetic class of {len(demo.CLASS)} students as an LMS download: {archive.relative_to(out)}"
    )
    for student in demo.CLASS:
        console.print(f"     {student.login:<6} {student.story}")
    collected = demo.nbgrader_cli(course, "zip_collect", course.assignment, "--force")
    if collected.returncode != 0:
        console.print(f"[red]nbgrader zip_collect failed[/]\n{collected.stderr[-2000:]}")
        return 1
    console.print(f"3. nbgrader zip_collect → {len(list(course.submitted.iterdir()))} students in submitted/")
    console.print(f"4. Grading in parallel (pe-course grade --jobs {args.jobs}) and generating feedback:")
    summary, feedback_failures = run_grading(course, None, args.jobs, force=True, unisolated=True)
    exported = demo.nbgrader_cli(course, "export", "--to", str(course.root / "grades.csv"))
    console.print(
        f"5. Grades exported with nbgrader export → grades.csv "
        f"({'ok' if exported.returncode == 0 else 'failed'})"
    )
    print_round(course, summary, feedback_failures)
    report = _write_report(course)
    console.print(f"6. Report: [bold]{report}[/]" if report else "6. Report: not available")
    console.print(f"Feedback for students: {course.feedback}")
    console.print(
        f"Done in {time.monotonic() - started:.0f} s. Grade the written answers: cd {out} && "
        "pe-course formgrader, then pe-course feedback"
    )
    return 0 if check.ok and not feedback_failures else 1


def _repo_guess() -> Path:
    """The clone this package was installed from (editable installs), else the working directory."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "nbgrader_config.py").is_file() else Path.cwd()


def _write_report(course: Course):
    try:
        from ..report import write_report
    except ImportError:
        return None
    return write_report(course)


def cmd_feedback(args) -> int:
    """After manual grading: feedback regenerated for everyone, released, and zipped for an LMS."""
    from ..feedback import zip_for_lms
    from ..grading_round import feedback_round

    course = _course(args)
    if not _assignment_ready(course):
        return 2
    with course.gradebook() as gb:
        students = sorted(s.student.id for s in gb.find_assignment(course.assignment).submissions)
    if not students:
        console.print(
            f"[red]Nothing to give back[/]: no graded submissions of {course.assignment} "
            "(run pe-course grade first; guide: docs/instructor-guide.md#instructor-guide-the-grading-round)."
        )
        return 2
    with progress() as bars:
        bar = bars.add_task("Feedback", total=len(students), failed=0)

        def one_done(student: str, ok: bool, error: str) -> None:
            failed = bars.tasks[bar].fields["failed"] + (0 if ok else 1)
            bars.update(bar, advance=1, failed=failed)

        failures = feedback_round(course, students, jobs=args.jobs, on_done=one_done)
    for student, why in sorted(failures.items()):
        console.print(f"[red]feedback failed for {student}[/]: {why}")
    done = [s for s in students if s not in failures]
    console.print(f"Feedback generated for {len(done)} students in {course.feedback}/ (HTML pages only).")
    zips = zip_for_lms(course, done)
    console.print(
        f"For an LMS: one zip per student in {zips}/ (upload each as that student's feedback file)."
    )
    if args.exchange:
        with deferred():  # nbgrader's apps swallow a KeyboardInterrupt as a failure: Ctrl-C waits for the end
            released = course.api().release_feedback(course.assignment)
        if released.get("success"):
            console.print("Released through the nbgrader exchange: students fetch it in the Assignment List.")
        else:
            console.print(f"[red]nbgrader release_feedback failed[/]: {_first_line(released.get('error'))}")
            return 1
    return 1 if failures else 0


def _first_line(text) -> str:
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "unknown error"


def cmd_formgrader(args) -> int:
    """Jupyter in the course directory with nbgrader's formgrader open (manual grading)."""
    from .formgrader import serve

    return serve(_course(args), args.ip, args.port)


def cmd_report(args) -> int:
    course = _course(args)
    if not _assignment_ready(course):
        return 2
    from ..regrade import history
    from ..regrade_report import distribution
    from ..report import write_report

    path = write_report(course, Path(args.out) if args.out else None)
    console.print(f"Report written: {path}")
    regrades = history(course)
    if regrades:
        table = Table("date", "graders' version", "changed", "unchanged", "class before", "class after",
                      title="Regrades")  # fmt: skip
        for r in regrades:
            table.add_row(r.date, f"{', '.join(r.previous_versions)} -> {r.graders_version}",
                          str(len(r.students)), str(len(r.unchanged)), distribution(r.before),
                          distribution(r.after))  # fmt: skip
        console.print(table)
    return 0


def cmd_export(args) -> int:
    """Grades and feedback back to an LMS: one grades file and one feedback zip to upload."""
    from ..lms.grades import ExportError
    from ..lms.upload import SOURCE_HELP, export, upload_lines

    course = _course(args)
    if not _assignment_ready(course):
        return 2
    out = Path(args.out) if args.out else course.root / "exports" / course.assignment
    source = Path(args.source)
    if not source.is_file():
        console.print(
            f"[red]No {args.lms} export at {escape(str(source))}[/]: {SOURCE_HELP[args.lms]} "
            "(guide: docs/lms-export.md#grades-and-feedback-back-to-canvas-and-moodle)"
        )
        return 2
    only = None
    if args.changed_only:
        from ..regrade import latest_changed

        changed = latest_changed(course)
        if not changed:
            console.print("[red]Nothing exported[/]: no regrade changed any student (see pe-course report).")
            return 2
        only = set(changed)
        out = out if args.out else out / "changed"  # the full export stays as it was
    try:
        files, notes = export(course, args.lms, source, out, args.column or "", args.allow_missing, only)
    except (ExportError, FileNotFoundError) as exc:
        console.print(
            f"[red]Nothing exported[/]: {escape(str(exc))} "
            "(guide: docs/lms-export.md#refused-before-anything-is-written)",
            soft_wrap=True,
        )
        return 2
    for note in notes:
        console.print(f"  - {escape(note)}", soft_wrap=True)
    shown = [f.relative_to(course.root) if f.is_relative_to(course.root) else f for f in files]
    for line in upload_lines(args.lms, shown):
        console.print(escape(line), soft_wrap=True)
    console.print(f"Points of every graded cell, for your own analysis: {shown[2]}", soft_wrap=True)
    return 0


ASSIGNMENT_HELP = "one of the course's assignments (source/<assignment>/); default: the only one"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pe-course",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Grade the Positional Encoding notebooks with nbgrader and the hidden graders.",
        epilog="A grading round, from the course directory:\n"
        "  pe-course build                          self-validate the graders, then release\n"
        "  nbgrader zip_collect ASSIGNMENT          take in an LMS download (or nbgrader collect)\n"
        "  pe-course grade                          autograde in parallel, with feedback\n"
        "  pe-course formgrader                     grade the written answers in nbgrader's formgrader\n"
        "  pe-course feedback                       feedback with the written scores, LMS zips\n"
        "  pe-course report                         HTML report and grades.csv\n"
        "  pe-course export --lms canvas|moodle --from FILE   grades file and feedback zip to upload\n"
        "\nTry it on a synthetic class: pe-course demo\n"
        "Each command's --help has examples and the page of the guide (docs/) that explains it.",
    )
    parser.add_argument(
        "--course", type=Path, default=None, help="course directory (default: found from here)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = add_command(sub, "release", cmd_release)
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)
    p.add_argument("--check", action="store_true", help="only compare release/ with a fresh generation")

    p = add_command(sub, "grade", cmd_grade)
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)
    p.add_argument("--jobs", "-j", type=int, default=2, help="parallel worker processes (default 2)")
    p.add_argument("--student", action="append", help="grade only this student (repeatable)")
    p.add_argument("--force", action="store_true", help="re-grade even unchanged, already graded submissions")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="grade and print the regrade report (who changes, on which clause and input) without "
        "writing the gradebook, records, feedback or anything else",
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="grade on this Dask distributed scheduler's workers (needs the [dask] extra); "
        "--jobs then only sets the local feedback processes",
    )
    add_opt_outs(p)
    add_setup_groups(add_command(sub, "setup-groups", cmd_setup_groups))
    add_check_sandbox(add_command(sub, "check-sandbox", cmd_check_sandbox))

    p = add_command(sub, "report", cmd_report)
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)
    p.add_argument("--out", help="output directory (default: reports/<assignment>)")

    p = add_command(sub, "feedback", cmd_feedback)
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)
    p.add_argument("--jobs", "-j", type=int, default=2, help="parallel worker processes (default 2)")
    p.add_argument(
        "--exchange", action="store_true", help="also nbgrader release_feedback (nbgrader exchange)"
    )

    p = add_command(sub, "export", cmd_export)
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)
    p.add_argument("--lms", choices=("canvas", "moodle"), required=True)
    p.add_argument(
        "--from",
        dest="source",
        required=True,
        help="the Canvas gradebook export CSV, or the Moodle grading worksheet CSV",
    )
    p.add_argument(
        "--column", help="Canvas: the assignment's column (header, title or id) if not found by name"
    )
    p.add_argument("--out", help="output directory (default: exports/<assignment>)")
    p.add_argument("--allow-missing", action="store_true", help="send the others when students are missing")
    p.add_argument(
        "--changed-only",
        action="store_true",
        help="only the students the latest regrade changed (one upload)",
    )

    p = add_command(sub, "formgrader", cmd_formgrader)
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument("--ip", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)

    p = add_command(sub, "demo", cmd_demo)
    p.add_argument("--out", help="scratch course directory (default: a new temporary directory)")
    p.add_argument("--jobs", "-j", type=int, default=2, help="parallel worker processes (default 2)")

    p = add_command(sub, "build", cmd_build)
    p.add_argument("assignment", nargs="?", help=ASSIGNMENT_HELP)
    return parser


def main(argv: list[str] | None = None) -> int:
    import warnings

    # Students' notebooks often lack or repeat cell ids; nbformat repairs them and warns on every read.
    warnings.filterwarnings("ignore", module="nbformat")
    warnings.filterwarnings("ignore", message=".*cell id.*")
    parser = build_parser()
    args = parser.parse_args(argv)
    catch_signals()  # `kill <pid>` ends a round as cleanly as Ctrl-C
    try:
        return args.func(args)
    except UnknownAssignment as exc:
        console.print(f"[red]{escape(str(exc))}[/]", soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        console.print(
            "[yellow]Interrupted.[/] Workers and their sandboxes are stopped; every student graded so "
            "far is in the gradebook; run the same command again to go on from there."
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["main"]

"""The ``pe-course`` command: thin over nbgrader's own apps and API."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.markup import escape

from ..course import NotACourse, UnknownAssignment
from ..interruption import catch_signals
from .admin import add_check_sandbox, add_opt_outs, add_setup_groups, cmd_check_sandbox, cmd_setup_groups
from .formgrader import cmd_formgrader
from .help import add_command
from .lms import cmd_export
from .release import cmd_build, cmd_release
from .round_commands import cmd_feedback, cmd_grade, cmd_report
from .terminal import console


def _demo(args) -> int:
    """``pe-course demo`` (:func:`.demo.cmd_demo`), imported when run: the demo's class takes nbgrader's
    zip_collect plugins, about 1.5 s to import that every other command's start would pay."""
    from .demo import cmd_demo

    return cmd_demo(args)


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

    p = add_command(sub, "demo", _demo)
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
    except (UnknownAssignment, NotACourse) as exc:
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

"""What ``pe-course COMMAND --help`` tells an instructor: what the command does, examples, and the page
of the guide that explains it (a path in this repository, as it reads on GitHub and in a clone).

The documentation's command reference (docs/commands.md) is rendered from the same parser by
sphinx-argparse, so the page and ``--help`` cannot drift; ``tests/test_docs.py`` checks that every
command has examples and a page whose heading exists.
"""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandHelp:
    summary: str  # one line in `pe-course --help`
    description: str  # what it does, for an instructor
    examples: tuple[tuple[str, str], ...]  # (command line, what it does)
    page: str  # docs/<page>.md#<heading>


ROUND = "docs/instructor-guide.md"

COMMANDS: dict[str, CommandHelp] = {
    "build": CommandHelp(
        "self-validate the graders, then release (refuses when validation fails)",
        "Runs the graders' self-validation (the reference solution earns every point through the sandbox, "
        "the released stubs and code that does nothing earn none, every catalogued misconception loses "
        "its clause and is diagnosed), then writes release/ with nbgrader. Run it after every change to "
        "source/ or graders/, and commit source/ and release/ together.",
        (
            ("pe-course build", "the only assignment of the course"),
            ("pe-course build positional-encoding", "one assignment of several"),
        ),
        f"{ROUND}#instructor-guide-the-grading-round",
    ),
    "release": CommandHelp(
        "generate release/ with nbgrader and check it is safe for students",
        "Writes release/<assignment>/ from source/ with nbgrader generate_assignment, and refuses when a "
        "released notebook would still hold a solution or a hidden test. --check only compares the "
        "committed release/ with a fresh generation (what CI runs). `pe-course build` does this after "
        "the self-validation; use release alone for a text-only change.",
        (
            ("pe-course release", "regenerate release/ after editing source/"),
            ("pe-course release --check", "is the committed release/ up to date? (exit 1 if not)"),
        ),
        "docs/authoring.md#adding-a-notebook-or-an-assignment",
    ),
    "grade": CommandHelp(
        "autograde submissions in parallel (one gradebook writer), then feedback",
        "Grades every submission in submitted/ that is new or changed: each student's notebooks run in a "
        "bubblewrap sandbox, the hidden graders decide the points, nbgrader's gradebook gets them, and "
        "each student gets a feedback page. Graded again, a student's previous record is kept and the "
        "round ends with a regrade report (who changed, on which clause and input). Ctrl-C stops "
        "everything; the same command goes on from there.",
        (
            ("pe-course grade", "everyone new or changed, 2 processes"),
            ("pe-course grade --student ani --student budi --force", "two students again"),
            ("pe-course grade --dry-run", "after changing graders/: who would change, writing nothing"),
            ("pe-course grade --scheduler tcp://10.0.0.5:8786", "on a Dask cluster's workers"),
        ),
        f"{ROUND}#what-pe-course-grade-does",
    ),
    "formgrader": CommandHelp(
        "start Jupyter in the course directory and print the formgrader URL",
        "Starts JupyterLab with nbgrader's formgrader in the course directory and prints its URL: grade "
        "the written answers there with the rubric shown above each answer. Ctrl-C stops the server.",
        (("pe-course formgrader", "on 127.0.0.1, a free port"),),
        f"{ROUND}#in-the-browser-written-answers-feedback-report",
    ),
    "feedback": CommandHelp(
        "after manual grading: feedback for everyone again, zipped per student for an LMS",
        "After the written answers are graded: makes every student's feedback again with the written "
        "scores, zips it per student (feedback-zips/<assignment>/) for an LMS, and with --exchange also "
        "returns it through nbgrader's exchange.",
        (
            ("pe-course feedback", "pages and one zip per student"),
            ("pe-course feedback --exchange", "and nbgrader release_feedback"),
        ),
        f"{ROUND}#in-the-browser-written-answers-feedback-report",
    ),
    "report": CommandHelp(
        "HTML report with plots and the grades CSV, from the gradebook",
        "Writes reports/<assignment>/report.html (score distributions, the clauses most lost, "
        "misconceptions, students to look at, regrade history) and grades.csv, from the gradebook "
        "and the grading records.",
        (("pe-course report", "reports/<assignment>/report.html and grades.csv"),),
        f"{ROUND}#in-the-browser-written-answers-feedback-report",
    ),
    "export": CommandHelp(
        "grades and feedback back to an LMS: its grades file and one feedback zip",
        "Writes the file the LMS imports grades from (filled in from the LMS's own export, so every "
        "student and column is the LMS's) and one zip of feedback pages named as the LMS expects. "
        "Refuses, writing nothing, when a student of the gradebook is not in the LMS file.",
        (
            ("pe-course export --lms canvas --from canvas-gradebook.csv", "Canvas: CSV and comments zip"),
            ("pe-course export --lms moodle --from grading-worksheet.csv", "Moodle: worksheet and zip"),
            ("pe-course export --lms canvas --from canvas-gradebook.csv --changed-only", "after a regrade"),
        ),
        "docs/lms-export.md#grades-and-feedback-back-to-canvas-and-moodle",
    ),
    "demo": CommandHelp(
        "a whole grading round on a synthetic class in a scratch course directory",
        "Releases the course (its graders checked on the reference solutions and the stubs; pe-course "
        "build runs the whole self-validation), makes a class of 12 synthetic students as an LMS download, "
        "and runs the "
        "round on it (intake, grading, feedback, export, report) in a scratch directory: a way to see "
        "the tool work before the term starts.",
        (
            ("pe-course demo", "in a new temporary directory"),
            ("pe-course demo --out /tmp/pe-demo", "keep it to look at"),
        ),
        "docs/getting-started.md#getting-started",
    ),
    "setup-groups": CommandHelp(
        "(administrator, as root, once) give an ordinary user the control groups pe-course grade needs",
        "Make pe-course/USER in the control-group hierarchies pe-course uses (cgroup v1 memory, pids, "
        "cpuacct and freezer where mounted, else cgroup v2 with memory and pids) and give it to USER, so "
        "that pe-course grade run by USER bounds each student's run as a whole. On cgroup v2 the user's "
        "server must also be started in pe-course/USER/session.",
        (("sudo pe-course setup-groups --user dosen1", "once per instructor or assistant"),),
        "docs/deployment.md#a-shared-server-the-instructor-an-ordinary-user",
    ),
    "check-sandbox": CommandHelp(
        "run the sandbox's hostile probes on this machine now and say what each found",
        "Runs, as a submission's code in a sandbox made as for grading: reading a file of the grading user, "
        "reaching the network, leaving a process running, holding more memory across processes than a "
        "run's resource group allows. pe-course grade runs the same probes by itself once per machine, "
        "user and version of the sandbox code, and refuses to grade where one gets through.",
        (
            ("pe-course check-sandbox", "on a new grading machine or Dask worker"),
            ("pe-course check-sandbox --without-resource-groups", "where no control group can be had"),
        ),
        "docs/sandbox.md#the-self-test-on-each-grading-machine",
    ),
}


def add_command(sub, name: str, func) -> argparse.ArgumentParser:
    """The subcommand ``name``, with its summary, description, examples and page."""
    text = COMMANDS[name]
    width = max(len(line) for line, _ in text.examples)
    examples = "\n".join(f"  {line:<{width}}  # {what}" for line, what in text.examples)
    p = sub.add_parser(
        name,
        help=text.summary,
        description=textwrap.fill(text.description, 88),
        epilog=f"examples:\n{examples}\n\nguide: {text.page}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=func)
    return p

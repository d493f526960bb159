"""The README's two commands are what CI runs and what a new user types."""

from __future__ import annotations

import re

import pytest
from conftest import REPO, TOTAL_POINTS


def _commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)


def test_ci_runs_the_readme_test_command():
    test_command = next(c for c in _commands() if "pytest" in c and "pip install" in c)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command.strip() in ci.splitlines(), "`.ci/run` must run the README's test command verbatim"


def test_readme_main_command_installs_and_runs_the_demo():
    main = next(c for c in _commands() if "pe-course demo" in c)
    assert "pip install" in main and main.rstrip().endswith("pe-course demo")


def test_readme_documents_every_cli_command():
    from pe_course.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps them here
    text = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [name for name in commands if f"pe-course {name}" not in text]
    assert not missing, f"README does not mention: {missing}"


@pytest.mark.slow
def test_readme_instructor_round_runs_as_written_on_a_fresh_copy(tmp_path):
    """The README's round, line by line, in a copy of what a clone holds (no gradebook yet); the
    interactive formgrader is exercised by tests/test_instructor_round.py."""
    import os
    import shutil
    import subprocess
    import sys

    import nbformat
    from conftest import reference_nb

    from pe_course.intake import canvas_name, lms_zip

    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = next(c for c in _commands() if c.startswith("pe-course build"))
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    assert [line.split()[1] for line in lines] == [
        "build",
        "zip_collect",
        "grade",
        "formgrader",
        "feedback",
        "report",
        "export",
    ], text[:0]
    root = tmp_path / "clone"
    for name in ("source", "release", "graders"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    shutil.copy(REPO / "nbgrader_config.py", root)
    nb = nbformat.writes(reference_nb("01_embedding")).encode()
    lms_zip(
        root / "downloaded" / "positional-encoding" / "archive" / "download.zip",
        {
            canvas_name("ani", 1, 2, "01_embedding.ipynb"): nb,
            canvas_name("budi", 3, 4, "01_embedding (1).ipynb"): nb,
        },
    )
    (root / "canvas-gradebook.csv").write_text(  # as Canvas's Grades → Export writes it
        "Student,ID,SIS User ID,SIS Login ID,Section,Positional Encoding (77),Current Score\n"
        f"    Points Possible,,,,,{TOTAL_POINTS:.2f},(read only)\n"
        "ani,1,,ani,TI-A,,\nbudi,3,,budi,TI-A,,\n",
        encoding="utf-8",
    )
    bindir = os.path.dirname(sys.executable)
    for line in lines:
        if line.startswith("pe-course formgrader"):
            continue
        argv = line.split()
        proc = subprocess.run(
            [os.path.join(bindir, argv[0]), *argv[1:]],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=540,
            env={**os.environ, "COLUMNS": "200"},
            check=False,
        )
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stdout + proc.stderr, line
        if argv[1] == "export":  # nobody graded the written answers (formgrader skipped): blank, named
            assert proc.stdout.count("written answer(s) not graded yet") == 2, proc.stdout
    assert (root / "feedback-zips" / "positional-encoding" / "ani.zip").is_file()
    exports = root / "exports" / "positional-encoding"
    assert {p.name for p in exports.iterdir()} == {
        "canvas-grades-import.csv",
        "canvas-feedback.zip",
        "cell-points.csv",
    }
    assert {p.name for p in (root / "reports" / "positional-encoding").iterdir()} >= {
        "report.html",
        "grades.csv",
    }

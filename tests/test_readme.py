"""The README's two commands are what CI runs and what a new user types; the README is one screen.

The instructor's round and the documentation site are tested in tests/test_docs.py."""

from __future__ import annotations

import re

from conftest import REPO


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


def test_readme_is_one_screen():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 120, f"README.md has {len(lines)} lines: move the detail to a page of docs/"


def test_readme_round_is_the_instructor_guides():
    guide = (REPO / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    ours = next(c for c in _commands() if c.startswith("pe-course build"))
    theirs = next(
        c for c in re.findall(r"```bash\n(.*?)\n```", guide, flags=re.S) if c.startswith("pe-course build")
    )
    assert ours == theirs, (
        "README.md's grading round differs from docs/instructor-guide.md's (the one the tests run)"
    )


def test_getting_started_has_the_readmes_two_commands():
    page = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", page, flags=re.S)
    assert [c for c in _commands() if "pip install" in c] == blocks

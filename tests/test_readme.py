"""The README's two commands are what CI runs and what a new user types; the README is one screen.

The instructor's round and the documentation site are tested in tests/test_docs.py."""

from __future__ import annotations

from conftest import REPO, bash_blocks, readme_test_command


def _commands() -> list[str]:
    return bash_blocks(REPO / "README.md")


def test_ci_runs_the_readme_test_command():
    test_command = readme_test_command()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command.strip() in ci.splitlines(), "`.ci/run` must run the README's test command verbatim"


def test_readme_main_command_installs_and_runs_the_demo():
    main = next(c for c in _commands() if "pe-course demo" in c)
    assert "pip install" in main and main.rstrip().endswith("pe-course demo")


def test_readme_is_one_screen():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 120, f"README.md has {len(lines)} lines: move the detail to a page of docs/"


def test_readme_round_is_the_instructor_guides():
    ours = next(c for c in _commands() if c.startswith("pe-course build"))
    theirs = next(
        c for c in bash_blocks(REPO / "docs" / "instructor-guide.md") if c.startswith("pe-course build")
    )
    assert ours == theirs, (
        "README.md's grading round differs from docs/instructor-guide.md's (the one the tests run)"
    )


def test_getting_started_has_the_readmes_two_commands():
    blocks = bash_blocks(REPO / "docs" / "getting-started.md")
    assert [c for c in _commands() if "pip install" in c] == blocks

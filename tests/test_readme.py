"""The README's two commands are what CI runs and what a new user types."""

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


def test_readme_documents_every_cli_command():
    from pe_course.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps them here
    text = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [name for name in commands if f"pe-course {name}" not in text]
    assert not missing, f"README does not mention: {missing}"

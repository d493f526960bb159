"""The course describes itself: its assignments are the folders of source/, an assignment's notebooks
are the notebooks in its folder, and every command takes any assignment (naming them when given a
wrong one)."""

from __future__ import annotations

import nbformat
import pytest
from conftest import FUNCTIONS, NOTEBOOKS, REPO

from pe_course.cli import main
from pe_course.course import Course, UnknownAssignment, assignments


def _course_of(root, folders: dict[str, list[str]]):
    (root / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    for assignment, notebooks in folders.items():
        (root / "source" / assignment).mkdir(parents=True)
        for name in notebooks:
            nbformat.write(nbformat.v4.new_notebook(), root / "source" / assignment / f"{name}.ipynb")
    return root


def test_an_assignment_and_its_notebooks_are_the_folders_of_source(tmp_path):
    root = _course_of(tmp_path, {"b-chapter": ["02_two", "01_one"], "a-chapter": ["01_x"], "empty": []})
    assert assignments(root) == ["a-chapter", "b-chapter"], "a folder without a notebook is none"
    assert Course(root, "b-chapter").notebooks == ("01_one", "02_two")
    assert Course.here(root / "source", "a-chapter").notebooks == ("01_x",)
    with pytest.raises(
        UnknownAssignment, match="^Name the assignment: this course has 'a-chapter', 'b-chapter'$"
    ):
        Course(root)
    with pytest.raises(
        UnknownAssignment, match="^Unknown assignment 'nope': this course has 'a-chapter', 'b-chapter'$"
    ):
        Course.here(root, "nope")


def test_a_course_with_one_assignment_needs_no_name():
    assert Course(REPO).assignment == assignments(REPO)[0] and len(assignments(REPO)) == 1
    assert Course(REPO).notebooks == NOTEBOOKS


@pytest.mark.parametrize(
    "command",
    [
        ["release"],
        ["build"],
        ["grade"],
        ["report"],
        ["feedback"],
        ["export", "--lms", "canvas", "--from", "nowhere.csv"],
        ["formgrader"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_says_in_one_line_which_assignments_exist(tmp_path, capsys, command):
    root = _course_of(tmp_path, {"a-chapter": ["01_x"], "b-chapter": ["01_y"]})
    assert main(["--course", str(root), command[0], "nope", *command[1:]]) == 2
    out = capsys.readouterr().out.strip()
    assert out == "Unknown assignment 'nope': this course has 'a-chapter', 'b-chapter'"
    assert main(["--course", str(root), *command]) == 2, "two assignments: none is taken for granted"
    assert capsys.readouterr().out.strip() == "Name the assignment: this course has 'a-chapter', 'b-chapter'"
    assert not (root / "gradebook.db").exists(), "nothing written before the assignment is known"


def test_the_demo_names_the_graded_functions_the_graders_declare():
    from pe_course import demo

    assert demo.FUNCTIONS == FUNCTIONS
    assert Course(REPO, demo.ASSIGNMENT).notebooks == NOTEBOOKS

"""The course describes itself: its assignments are the folders of source/, an assignment's notebooks
are the notebooks in its folder, and every command takes any assignment (naming them when given a
wrong one)."""

from __future__ import annotations

import io
import shutil
import tarfile

import nbformat
import pytest
from conftest import COURSE, FUNCTIONS, NOTEBOOKS, REPO, reference_nb, requires_bwrap

from pe_course.cli import main
from pe_course.course import Course, UnknownAssignment, assignments, graders_path


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


def test_a_course_with_one_assignment_needs_no_name(tmp_path):
    root = _course_of(tmp_path, {"a-chapter": ["02_y", "01_x"]})
    assert Course(root).assignment == "a-chapter" and Course.here(root).notebooks == ("01_x", "02_y")


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


@pytest.mark.parametrize(
    "command", [["release"], ["build"], ["grade"], ["report"], ["feedback"], ["formgrader"]]
)
def test_outside_a_course_every_command_says_so_in_one_line(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith(
        f"No nbgrader_config.py in {tmp_path} or above: run pe-course from the course directory"
    )
    assert "\n" not in out and list(tmp_path.iterdir()) == []


def test_the_demo_names_the_graded_functions_the_graders_declare():
    from pe_course.cli import demo_class as demo

    assert demo.FUNCTIONS == FUNCTIONS
    assert Course(REPO, demo.ASSIGNMENT).notebooks == NOTEBOOKS


def _moved_graders(tmp_path, graders_dir: str = "hidden/{assignment}"):
    """A copy of the course whose graders sit at ``graders_dir`` (c.ScoreWithGraders.graders_dir)."""
    root = tmp_path / "course"
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis")
    shutil.copytree(COURSE.source, root / "source" / COURSE.assignment, ignore=ignore)
    graders = graders_path(root, graders_dir, COURSE.assignment)
    shutil.copytree(COURSE.graders, graders, ignore=ignore)
    config = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    config += f"\nc.ScoreWithGraders.graders_dir = {graders_dir!r}\n"
    (root / "nbgrader_config.py").write_text(config, encoding="utf-8")
    return Course(root, COURSE.assignment)


def test_every_reader_of_the_graders_asks_the_one_trait_autograde_reads(tmp_path):
    """Build, the release's public checks, resumption and the cluster bundle look where autograde looks."""
    from pe_course.build.release import public_check_files
    from pe_course.round.resume import graders_fingerprint
    from pe_course.runners.bundle import course_bundle

    course = _moved_graders(tmp_path)
    assert course.graders == course.root / "hidden" / "positional-encoding"
    assert public_check_files(course) == public_check_files(COURSE)
    before = graders_fingerprint(course)
    (course.graders / "01_embedding" / "cases" / "one_hot.json").write_text("[]", encoding="utf-8")
    assert graders_fingerprint(course) != before, "a change of the graders re-grades"
    (tmp_path / "template.db").write_bytes(b"")
    with tarfile.open(fileobj=io.BytesIO(course_bundle(course, tmp_path / "template.db"))) as bundle:
        names = bundle.getnames()
    assert "hidden/positional-encoding/01_embedding/checks.py" in names
    assert not [n for n in names if n.startswith("graders/")]


def test_graders_outside_the_course_travel_in_the_bundle_where_its_config_points(tmp_path):
    """An absolute graders_dir names a folder a Dask worker does not have: the bundle carries the graders
    as graders/<assignment>/ and its nbgrader_config.py says so, so the worker grades with them."""
    from pe_course.engine.discovery import load_suite
    from pe_course.runners.bundle import course_bundle, untar

    course = _moved_graders(tmp_path, str(tmp_path / "elsewhere" / "{assignment}"))
    assert course.graders == tmp_path / "elsewhere" / course.assignment
    (tmp_path / "template.db").write_bytes(b"")
    worker = tmp_path / "worker"
    untar(course_bundle(course, tmp_path / "template.db"), worker)
    there = Course(worker, course.assignment)
    assert there.graders == worker / "graders" / course.assignment
    assert load_suite(there.graders).checks.keys() == load_suite(course.graders).checks.keys()


@requires_bwrap
def test_autograde_grades_with_the_graders_of_its_trait(tmp_path):
    from pe_course.record import GradingRecord
    from pe_course.steps.score import ScoreWithGraders

    course = _moved_graders(tmp_path)
    step = ScoreWithGraders(config=course.config())
    info = {"assignment": course.assignment, "notebook": "02_sinusoidal", "student": "ani"}
    step.preprocess(reference_nb("02_sinusoidal"), {"nbgrader": info})
    record = GradingRecord.read(course.autograded / "ani" / course.assignment / "02_sinusoidal.grading.json")
    assert [c.score for c in record.cells] == [c.max_score for c in record.cells] and record.cells


@pytest.mark.slow  # runs nbgrader's `alembic heads` once, for the comparison
def test_a_new_gradebook_gets_nbgraders_schema_version_without_its_alembic_command(tmp_path, monkeypatch):
    """nbgrader stamps a new gradebook with the newest revision of its migrations, which it asks the
    ``alembic heads`` command for; read in-process instead (pe_course.steps.pipeline), it is the same revision."""
    from nbgrader.api import Gradebook
    from sqlalchemy import text

    from pe_course.steps import pipeline

    expected = pipeline._ALEMBIC_HEADS_COMMAND()
    assert expected and pipeline.gradebook_schema_version() == expected
    monkeypatch.setenv("PATH", str(tmp_path))  # no `alembic` command to run: nbgrader's way would fail
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        stamped = gb.db.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert stamped == expected

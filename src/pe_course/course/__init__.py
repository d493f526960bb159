"""The course directory: paths and nbgrader's own configuration and API for it.

The tooling names no assignment: a course's assignments are the folders of ``source/`` that hold a
notebook, an assignment's notebooks are the notebooks in its folder (sorted by name), and its graded
functions are what its graders declare, one folder per notebook (``pe_course.engine.discovery.load_suite``).

The package: this module (:class:`Course`: the directory and its config, read once per ``Course``),
:mod:`.notebooks` (cells, grade ids, the reference solution from the source notebooks) and
:mod:`.datafiles` (an assignment's data files, as the sandbox and the release take them).

Runs in the instructor's process and in every grading worker. The bottom of the house: it imports only
``public_checks`` (a clause), ``sandbox.inside.worker`` (how a cell is run), ``contracts`` (the clauses
a notebook states), never anything above it (``tests/test_package_layout.py``; docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# ScoreWithGraders.graders_dir's default: where an assignment's hidden graders are, relative to the
# course root; "{assignment}" in it stands for the assignment (e.g. "graders/{assignment}").
GRADERS_DIR = "graders/{assignment}"


def graders_path(root: Path, graders_dir: str, assignment: str) -> Path:
    """The folder of ``assignment``'s hidden graders for ``c.ScoreWithGraders.graders_dir``."""
    return Path(root) / graders_dir.replace("{assignment}", assignment)


class NotACourse(FileNotFoundError):
    """No course directory where pe-course was run (one line)."""


def find_root(start: Path | None = None) -> Path:
    """The nearest directory (from ``start`` or the working directory up) with nbgrader_config.py."""
    here = Path(start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "nbgrader_config.py").is_file():
            return candidate
    raise NotACourse(
        f"No nbgrader_config.py in {here} or above: run pe-course from the course directory "
        "(guide: docs/getting-started.md#getting-started)"
    )


def assignments(root: Path) -> list[str]:
    """The course's assignments: the folders of ``source/`` holding at least one notebook, sorted."""
    source = Path(root) / "source"
    if not source.is_dir():
        return []
    return sorted(p.name for p in source.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


class UnknownAssignment(ValueError):
    """An assignment the course does not have, or none named where the course has several (one line)."""


def assignment_of(root: Path, name: str | None = None) -> str:
    """``name`` when it is one of the course's assignments; without one, the course's only assignment.

    Raises :class:`UnknownAssignment` saying in one line which assignments exist.
    """
    found = assignments(root)
    listed = ", ".join(repr(a) for a in found) or "none (no source/<assignment>/*.ipynb)"
    if name:
        if name not in found:
            raise UnknownAssignment(f"Unknown assignment {name!r}: this course has {listed}")
        return name
    if len(found) != 1:
        raise UnknownAssignment(f"Name the assignment: this course has {listed}")
    return found[0]


@dataclass(frozen=True)
class Course:
    """One assignment of the course in ``root`` (``assignment`` "": the course's only one)."""

    root: Path
    assignment: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))
        if not self.assignment:
            object.__setattr__(self, "assignment", assignment_of(self.root))

    @classmethod
    def here(cls, start: Path | None = None, assignment: str | None = None) -> Course:
        """The course found from ``start`` (or the working directory) up; ``assignment`` checked."""
        root = find_root(start)
        return cls(root, assignment_of(root, assignment))

    @property
    def notebooks(self) -> tuple[str, ...]:
        """The assignment's notebooks (names without ``.ipynb``), as its source folder holds them."""
        return tuple(p.stem for p in sorted(self.source.glob("*.ipynb")))

    @property
    def other_notebooks(self) -> tuple[str, ...]:
        """The notebooks of the course's other assignments, by name (a file named as one of them is not
        one of this assignment's, whatever its number)."""
        others = (Course(self.root, a).notebooks for a in assignments(self.root) if a != self.assignment)
        return tuple(sorted({name for notebooks in others for name in notebooks}))

    @property
    def source(self) -> Path:
        return self.root / "source" / self.assignment

    @property
    def release(self) -> Path:
        return self.root / "release" / self.assignment

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def autograded(self) -> Path:
        return self.root / "autograded"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    @property
    def graders(self) -> Path:
        """This assignment's hidden graders, where autograde finds them (c.ScoreWithGraders.graders_dir):
        the one place the build, the release's public checks, resumption and the cluster bundle ask."""
        graders_dir = self.config().ScoreWithGraders.get("graders_dir", GRADERS_DIR)
        return graders_path(self.root, graders_dir, self.assignment)

    @property
    def state_dir(self) -> Path:
        return self.root / ".pe-course"

    def config(self, **overrides):
        """nbgrader's configuration for this course (nbgrader_config.py), with overrides.

        ``overrides`` map "Class.trait" to values, e.g. {"CourseDirectory.db_url": "sqlite:///x.db"}.
        """
        from jupyter_core.paths import jupyter_config_path
        from traitlets.config import Config
        from traitlets.config.loader import PyFileConfigLoader

        # As nbgrader's own commands read it: the system's and the user's nbgrader_config.py (where a
        # JupyterHub or an instructor sets e.g. Exchange.root) under the course's own, which wins.
        cfg = Config()
        for folder in [*reversed(jupyter_config_path()), str(self.root)]:
            if (Path(folder) / "nbgrader_config.py").is_file():
                cfg.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
        cfg.CourseDirectory.root = str(self.root)
        for key, value in overrides.items():
            cls, trait = key.split(".")
            setattr(cfg[cls], trait, value)
        return cfg

    def coursedir(self, **overrides):
        from nbgrader.coursedir import CourseDirectory

        return CourseDirectory(config=self.config(**overrides))

    def api(self, **overrides):
        from nbgrader.apps import NbGraderAPI

        cfg = self.config(**overrides)
        from nbgrader.coursedir import CourseDirectory

        return NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)

    @property
    def db_url(self) -> str:
        return self.coursedir().db_url

    def gradebook(self, db_url: str | None = None, must_exist: bool = False):
        """nbgrader's Gradebook for this course (with its course id, so no "default_course" appears).

        ``must_exist``: raise ``FileNotFoundError`` instead of creating a missing SQLite gradebook
        (for commands that only read it, such as the report).
        """
        from nbgrader.api import Gradebook

        coursedir = self.coursedir()
        url = db_url or coursedir.db_url
        if must_exist and url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).is_file():
            raise FileNotFoundError(
                f"no gradebook at {url}; run `nbgrader generate_assignment` and autograde first"
            )
        return Gradebook(url, course_id=coursedir.course_id or "default_course")

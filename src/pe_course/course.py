"""The course directory: paths and nbgrader's own configuration and API for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ASSIGNMENT = "positional-encoding"
NOTEBOOKS = ("01_embedding", "02_sinusoidal", "03_rotation", "04_similarity")
# The graded functions, in notebook order (tests/test_self_validation.py checks them against graders/).
FUNCTIONS = (
    "embed",
    "one_hot",
    "embed_backward",
    "frequencies",
    "positional_encoding",
    "rotation_matrix",
    "shift_encoding",
    "apply_rope",
    "rope_scores",
    "position_similarity",
    "offset_similarity",
    "self_attention",
)


def find_root(start: Path | None = None) -> Path:
    """The nearest directory (from ``start`` or the working directory up) with nbgrader_config.py."""
    here = Path(start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "nbgrader_config.py").is_file():
            return candidate
    raise FileNotFoundError("no nbgrader_config.py here or above; run pe-course from the course directory")


@dataclass(frozen=True)
class Course:
    root: Path
    assignment: str = ASSIGNMENT

    @classmethod
    def here(cls, start: Path | None = None) -> Course:
        return cls(find_root(start))

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
        return self.root / "graders"

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

"""The autograde's reader of submissions (nbgrader's ``Autograde.exporter_class``): a notebook that
cannot be read becomes the released stub, with a note; and where student code cannot run safely the whole
run is refused before anything is written."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader.coursedir import CourseDirectory

from ..record import NoteKind
from .notes import NOTES_KEY, add_note, read_submission


class TolerantNotebookExporter(NotebookExporter):
    """Reads a submission; an unreadable one becomes the released stub plus a note.

    It is also the first thing nbgrader's Autograde builds after finding the submissions and before
    writing anything (gradebook, ``autograded/``): without working isolation, and without the
    instructor's opt-in, it refuses the whole run there with one line (see ``pe_course.sandbox.policy``).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        from nbgrader.converters.base import NbGraderException

        from ..sandbox import policy, selftest

        try:
            selftest.check(self.config)
        except policy.IsolationUnavailable as exc:
            self.log.error("%s", exc)
            raise NbGraderException(str(exc)) from None

    def from_filename(self, filename, resources=None, **kw):
        try:
            nb = read_submission(filename)
            if getattr(self.parent, "_sanitizing", False):
                nb.metadata.pop(NOTES_KEY, None)  # notes come from us, never from the submission
        except Exception as exc:
            stub = self._release_copy(filename, resources)
            if stub is None:
                raise
            self.log.warning("Unreadable notebook %s (%s); grading the released stub instead", filename, exc)
            with open(stub, encoding="utf-8") as f:
                nb = nbformat.read(f, as_version=4)
            add_note(nb, NoteKind.UNREADABLE_NOTEBOOK, f"{type(exc).__name__}: {str(exc)[:200]}")
        return self.from_notebook_node(nb, resources=resources, **kw)

    def _release_copy(self, filename, resources) -> Path | None:
        info = (resources or {}).get("nbgrader", {})
        if not info:
            return None
        coursedir = CourseDirectory(config=self.config)
        path = Path(coursedir.format_path(coursedir.release_directory, ".", info["assignment"])) / (
            Path(filename).name
        )
        return path if path.exists() else None

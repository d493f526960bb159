"""Sanitize: make a submitted notebook gradable without trusting it (nbgrader's sanitize step).

Unreadable notebooks are replaced by the released stub (scored 0, the original kept in
``submitted/``); broken nbgrader metadata is repaired from the gradebook instead of aborting the run;
duplicated cells count once; deleted test cells are restored (also when their neighbours are gone);
the written answers' rubrics are put back above the answers for formgrader. What was done is noted
for the grading record (:func:`add_note`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import MetadataValidator, SchemaTooNewError, SchemaTooOldError, ValidationError
from nbgrader.preprocessors import ClearMarkScheme, NbGraderPreprocessor, OverwriteCells
from nbgrader.utils import is_grade, is_locked, is_solution

from .notebook import grade_id
from .record import Note, NoteKind

NOTES_KEY = "pe_course"


def add_note(nb: Any, kind: NoteKind, detail: str) -> None:
    """A note for the grading record, carried in the notebook's metadata between preprocessors."""
    nb.metadata.setdefault(NOTES_KEY, {}).setdefault("notes", []).append(
        {"kind": kind.value, "detail": detail}
    )


def notes(nb: Any) -> list[Note]:
    return [n for n in map(Note.parse, nb.metadata.get(NOTES_KEY, {}).get("notes", [])) if n is not None]


def read_submission(filename) -> Any:
    """Read a submitted notebook, repairing what nbformat can repair; raise if it is not a notebook."""
    with open(filename, encoding="utf-8") as f:
        nb = nbformat.read(f, as_version=4)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError:
        _, repaired = nbformat.validator.normalize(nb, strip_invalid_metadata=True)
        nb = nbformat.from_dict(repaired)
        nbformat.validate(nb)
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a notebook: no cells")
    return nb


class TolerantNotebookExporter(NotebookExporter):
    """Reads a submission; an unreadable one becomes the released stub plus a note.

    It is also the first thing nbgrader's Autograde builds after finding the submissions and before
    writing anything (gradebook, ``autograded/``): without working isolation, and without the
    instructor's opt-in, it refuses the whole run there with one line (see ``pe_course.sandbox.policy``).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        from nbgrader.converters.base import NbGraderException

        from .sandbox import policy, selftest

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


class RepairMetadata(NbGraderPreprocessor):
    """Repairs nbgrader cell metadata that would make nbgrader abort the whole run.

    Old schema versions are upgraded; unknown (newer) versions and invalid metadata are rebuilt from
    the gradebook for known grade ids and dropped otherwise. Each repair is noted for the record.
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        course_id = CourseDirectory(config=self.config).course_id or "default_course"
        with Gradebook(info["db_url"], course_id=course_id) as gb:
            try:
                known = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                known = None
            sources = {c.name: c for c in known.source_cells} if known else {}
            grades = {c.name: c for c in known.grade_cells} if known else {}
            solutions = {c.name for c in known.solution_cells} if known else set()
            for index, cell in enumerate(nb.cells):
                self._repair(nb, index, cell, sources, grades, solutions)
        return nb, resources

    def _repair(self, nb, index, cell, sources, grades, solutions) -> None:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            return
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        problem = None
        validator = MetadataValidator()
        try:
            if not isinstance(meta, dict):
                raise ValidationError("metadata is not a dict")
            validator.upgrade_cell_metadata(cell)
            validator.validate_cell(cell)
        except (
            SchemaTooNewError,
            SchemaTooOldError,
            ValidationError,
            KeyError,
            TypeError,
            AttributeError,
        ) as exc:
            problem = f"{type(exc).__name__}: {str(exc)[:120]}"
        if not (isinstance(gid, str) and gid in sources):
            if problem or gid is not None:  # a cell the assignment does not have: an ordinary cell
                del cell.metadata["nbgrader"]
                add_note(
                    nb,
                    NoteKind.DROPPED_METADATA,
                    f"cell {index} ({str(gid)[:60]!r}): {problem or 'unknown grade id'}",
                )
            return
        src = sources[gid]
        expected = {
            "grade": gid in grades,
            "solution": gid in solutions,
            "locked": bool(src.locked),
            "grade_id": gid,
            "schema_version": 3,
            "task": False,
        }
        if gid in grades:
            expected["points"] = grades[gid].max_score
        current = cell.metadata["nbgrader"]
        flags_changed = any(
            current.get(k) != v for k, v in expected.items() if k not in ("schema_version", "task")
        )
        if problem or flags_changed:  # the gradebook, not the submission, says what a cell is worth
            cell.metadata["nbgrader"] = expected
            add_note(
                nb,
                NoteKind.REPAIRED_METADATA,
                f"cell {index} ({gid}): {problem or 'flags or points changed'}",
            )
            self.log.warning("Repaired nbgrader metadata of cell %s (%s): %s", index, gid, problem or "flags")


class ForgetDuplicates(NbGraderPreprocessor):
    """After ``DeduplicateIds``: the earlier copies of a duplicated cell keep an empty ``nbgrader`` dict,
    which nbgrader later reads as an outdated schema and aborts the run; drop it and note the duplicate."""

    def preprocess(self, nb, resources):
        for index, cell in enumerate(nb.cells):
            if cell.metadata.get("nbgrader", None) == {}:
                del cell.metadata["nbgrader"]
                add_note(
                    nb,
                    NoteKind.DUPLICATE_CELL,
                    f"cell {index} repeats a graded or solution cell; the last copy counts",
                )
        return nb, resources


class RobustOverwriteCells(OverwriteCells):
    """``OverwriteCells`` whose restoring of deleted grade cells survives deleted neighbours.

    nbgrader inserts a missing grade cell after the *previous source cell*, and fails with a
    KeyError when that cell was deleted too; here it goes after the nearest earlier cell that is
    still present (or first).
    """

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [c.name for c in source_nb.source_cells]
        grade_cells = {c.name: c for c in source_nb.grade_cells}
        solution_ids = {c.name for c in source_nb.solution_cells}
        for gid in order:
            if gid not in grade_cells or self._position(nb, gid) is not None:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", gid)
            source_cell = source_nb.source_cells[order.index(gid)]
            new = self.missing_cell_transform(
                source_cell, grade_cells[gid].max_score, is_solution=gid in solution_ids
            )
            at = 0
            for earlier in reversed(order[: order.index(gid)]):
                pos = self._position(nb, earlier)
                if pos is not None:
                    at = pos + 1
                    break
            nb.cells.insert(at, new)
            add_note(nb, NoteKind.RESTORED_CELL, gid)
        return nb, resources

    def add_missing_task_cells(self, nb, resources):
        """As nbgrader's, but cells whose metadata DeduplicateIds emptied (no grade_id) are skipped
        instead of raising KeyError, which aborted the whole student."""
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [c.name for c in source_nb.source_cells]
        present = {grade_id(cell) for cell in nb.cells} - {None}
        for task in source_nb.task_cells:
            if task.name not in present:
                source_cell = source_nb.source_cells[order.index(task.name)]
                nb.cells.append(self.missing_cell_transform(source_cell, task.max_score, is_task=True))
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        self._restore_rubric(cell)
        return super().preprocess_cell(cell, resources, cell_index)

    def _restore_rubric(self, cell) -> None:
        """Put back the rubric (mark scheme) that generate_assignment stripped from a locked cell.

        nbgrader would restore it too, but it would log every student's untouched question cell as
        "changed"; a cell that differs from the source by more than its rubric still goes through
        nbgrader's check (and is reported and restored there).
        """
        gid = grade_id(cell)
        if not gid or not is_locked(cell):
            return
        try:
            source_cell = self.gradebook.find_source_cell(gid, self.notebook_id, self.assignment_id)
        except MissingEntry:
            return
        marks = ClearMarkScheme(parent=self)
        if marks.begin_mark_scheme_delimeter not in source_cell.source:
            return
        stripped = nbformat.v4.new_markdown_cell(source_cell.source)
        marks._remove_mark_scheme_region(stripped)
        if stripped.source == cell.source:
            cell.source = source_cell.source

    @staticmethod
    def _position(nb, gid):
        for i, cell in enumerate(nb.cells):
            if (is_grade(cell) or is_solution(cell) or is_locked(cell)) and grade_id(cell) == gid:
                return i
        return None

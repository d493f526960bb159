"""Sanitize step: nbgrader cell metadata that would abort the run is repaired from the gradebook."""

from __future__ import annotations

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import MetadataValidator, SchemaTooNewError, SchemaTooOldError, ValidationError
from nbgrader.preprocessors import NbGraderPreprocessor

from ..record import NoteKind
from .notes import add_note


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

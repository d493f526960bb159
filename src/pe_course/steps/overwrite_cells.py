"""Sanitize step: deleted test cells restored even when their neighbours are gone; rubrics put back."""

from __future__ import annotations

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearMarkScheme, OverwriteCells
from nbgrader.utils import is_grade, is_locked, is_solution

from ..course.notebooks import grade_id
from ..record import NoteKind
from .notes import add_note


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

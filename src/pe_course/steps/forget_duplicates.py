"""Sanitize step: the earlier copies of a duplicated cell are forgotten, and noted."""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from ..record import NoteKind
from .notes import add_note


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

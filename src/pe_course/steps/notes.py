"""What the sanitize steps note for the grading record, carried in the notebook's metadata between
nbgrader's preprocessors, and how a submission is read without trusting it."""

from __future__ import annotations

from typing import Any

import nbformat

from ..record import Note, NoteKind

NOTES_KEY = "pe_course"


def add_note(nb: Any, kind: NoteKind, detail: str) -> None:
    """A note for the grading record, carried in the notebook's metadata between preprocessors."""
    nb.metadata.setdefault(NOTES_KEY, {}).setdefault("notes", []).append(
        {"kind": kind.value, "detail": detail}
    )


def notes(nb: Any) -> list[Note]:
    return [n for n in map(Note.from_dict, nb.metadata.get(NOTES_KEY, {}).get("notes", [])) if n is not None]


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

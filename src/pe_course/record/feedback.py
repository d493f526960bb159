"""The feedback of a graded test cell, rendered from its result in the record: the Indonesian text a
student reads (score, each clause with its points and the failure charged to it, the hint of a diagnosed
misconception), in the same words as the public check students run before submitting."""

from __future__ import annotations

from ..public_checks import clause_lines, plain
from .model import CellResult
from .outcomes import indonesian


def cell_markdown(cell: CellResult) -> str:
    """The feedback of one graded test cell, as markdown (what students read in their feedback):
    the score, then every clause of the function with its points and, where it was lost, the
    failure charged to it (input, expected, obtained, why), then a diagnosed misconception's hint."""
    lines = [f"**Penilaian otomatis `{cell.function}`: {cell.score:g} / {cell.max_score:g} poin**", ""]
    intro = indonesian(cell.status)
    if intro:
        lines += [intro, ""]
    for c in cell.clauses:
        message = c.message or ("Gagal." if not c.passed else "")
        lines += clause_lines(c.clause, c.text, c.points, c.max_points, message, c.note)
    for m in cell.misconceptions:
        lines += ["", f"💡 **Kemungkinan miskonsepsi `{m['id']}`:** {m['hint']}"]
    return "\n".join(lines)


def cell_text(cell: CellResult) -> str:
    """The same feedback as plain text (the text/plain output next to the markdown)."""
    text = plain(cell_markdown(cell))
    return text.replace("✅", "[lolos]").replace("❌", "[gagal]").replace("💡 ", "")

"""What a student's feedback page says when a regrade changed it: a cell at the top of the page, in
formal Indonesian ("Nilai Anda … berubah dari … menjadi … karena …"), from the ``regrade`` part of the
notebook's ``.grading.json`` record (written by :meth:`pe_course.round.regrade.Regrade.keep`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from ..record import GradingRecord


def _points(value: Any) -> str:
    return f"{float(value):g}" if isinstance(value, (int, float)) else "?"


def _verdict(side: dict[str, Any]) -> str:
    if not side:
        return "belum dinilai"
    if "status" in side:
        return f"berstatus {side['status']}"
    if side.get("passed"):
        return f"terpenuhi ({_points(side.get('points'))}/{_points(side.get('max_points'))} poin)"
    text = f"tidak terpenuhi ({_points(side.get('points'))}/{_points(side.get('max_points'))} poin"
    return text + (f", input `{side['input']}`)" if side.get("input") else ")")


def notice_markdown(regrade: dict[str, Any]) -> str:
    """The notice for one notebook (markdown)."""
    old, new = regrade.get("old_score"), regrade.get("new_score")
    reason = "karena penilai otomatis telah diperbarui dan notebook Anda dinilai ulang"
    if old is not None and new is not None and old != new:
        head = f"Nilai Anda untuk notebook ini berubah dari **{_points(old)}** menjadi **{_points(new)}** {reason}."
    else:
        head = f"Nilai Anda untuk notebook ini tidak berubah, tetapi umpan baliknya berubah {reason}."
    lines = [f"### Perubahan penilaian ({str(regrade.get('date', ''))[:10]})", "", head, ""]
    for c in regrade.get("clauses", []):
        if not isinstance(c, dict):
            continue
        where = f"`{c.get('function', '')}`" + (f", ketentuan {c['clause']}" if c.get("clause") else "")
        lines.append(
            f"- {where}: sebelumnya {_verdict(c.get('old') or {})}, sekarang {_verdict(c.get('new') or {})}."
        )
    kept = [k for k in regrade.get("kept", []) if isinstance(k, dict)]
    if kept:
        cells = ", ".join(f"`{k.get('cell', '')}` ({_points(k.get('manual'))} poin)" for k in kept)
        lines += ["", f"Nilai yang diberikan pengajar tetap berlaku: {cells}."]
    lines += ["", "Rincian lengkapnya ada pada sel-sel penilaian di bawah ini."]
    return "\n".join(lines)


class RegradeNotice(NbGraderPreprocessor):
    """nbgrader ``GenerateFeedback`` preprocessor: the notice first, when the notebook's record has one."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        coursedir = CourseDirectory(config=self.config)
        try:
            folder = coursedir.format_path(
                coursedir.autograded_directory, info["student"], info["assignment"]
            )
            record = GradingRecord.read(Path(folder) / f"{info['notebook']}.grading.json")
        except (OSError, ValueError, KeyError):
            return nb, resources  # no record (e.g. a notebook nbgrader alone graded): no notice
        if record.regrade:
            cell = nbformat.v4.new_markdown_cell(notice_markdown(record.regrade))
            cell.metadata["pe_course"] = {"regrade_notice": True}
            nb.cells.insert(0, cell)
        return nb, resources

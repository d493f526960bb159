"""Autograde step: each ``test_<function>`` cell scored by the hidden graders (:func:`pe_course.engine.grade_notebook`,
where the score is decided), the JSON record written beside the notebook, and the cell's outputs
showing what the student will read."""

from __future__ import annotations

import traceback
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Unicode

from ..course import GRADERS_DIR, graders_path
from ..course.datafiles import sandbox_data_files
from ..course.notebooks import grade_id, is_test_cell, load_reference
from ..engine import grade_notebook
from ..engine.discovery import load_suite
from ..record import CellResult, CellStatus, GradingRecord, Note, NoteKind
from ..record.feedback import cell_markdown, cell_text
from ..sandbox import Limits
from ..sandbox.policy import IsolationUnavailable
from .notes import notes
from .sandbox_config import sandbox_from_config


class ScoreWithGraders(NbGraderPreprocessor):
    """Scores each ``test_<function>`` cell with the hidden graders and writes the JSON record."""

    graders_dir = Unicode(
        GRADERS_DIR,
        help="Directory of the hidden graders (relative to the course root); {assignment} stands for "
        "the assignment, e.g. graders/{assignment} for one suite per assignment.",
    ).tag(config=True)
    notebook_timeout = Float(
        Limits().notebook_timeout, help="Wall-clock limit (seconds) for grading one notebook."
    ).tag(config=True)
    call_timeout = Float(
        Limits().call_timeout, help="Wall-clock limit (seconds) for one call of a student's function."
    ).tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        root = Path(coursedir.root)
        try:
            suite = load_suite(graders_path(root, self.graders_dir, info["assignment"]))
            reference = load_reference(
                Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
            )
            result = grade_notebook(
                nb,
                info["notebook"],
                suite,
                reference,
                sandbox_from_config(self),
                notes=notes(nb),
                files=sandbox_data_files(self.config, info["assignment"], self.log),
            )
        except IsolationUnavailable:
            raise  # not this student's fault: the whole run stops (nbgrader removes what it began)
        except Exception:  # noqa: BLE001 (a grader failure must zero, never pass, and never stop the batch)
            self.log.error(
                "Graders failed on %s/%s:\n%s", info["student"], info["notebook"], traceback.format_exc()
            )
            result = GradingRecord(
                info["notebook"], [], "unknown", notes=[*notes(nb), Note(NoteKind.GRADER_ERROR)]
            )
        if isinstance(resources.get("pe_course_execute_usage"), dict):
            result.resources["execute"] = resources["pe_course_execute_usage"]
        graded = {c.grade_id: c for c in result.cells}
        for cell in nb.cells:
            gid = grade_id(cell)
            if not (is_test_cell(cell) and gid):
                continue
            cr = graded.get(gid)
            if cr is None:
                cr = CellResult(
                    gid,
                    gid.removeprefix("test_"),
                    0.0,
                    float(cell.metadata.nbgrader.get("points", 0)),
                    CellStatus.ERROR,
                )
                result.cells.append(cr)
            cell.outputs = score_outputs(cr)
        self._write_record(coursedir, info, result)
        return nb, resources

    def _write_record(self, coursedir, info, result: GradingRecord) -> None:
        from ..course.versions import graders_version

        result.student, result.assignment = info["student"], info["assignment"]
        result.graders_version = graders_version(
            graders_path(Path(coursedir.root), self.graders_dir, info["assignment"]),
            Path(coursedir.format_path(coursedir.release_directory, ".", info["assignment"])),
        )
        folder = Path(
            coursedir.format_path(coursedir.autograded_directory, info["student"], info["assignment"])
        )
        result.write(folder / f"{info['notebook']}.grading.json")


def score_outputs(cell: CellResult) -> list:
    """Outputs nbgrader scores: feedback (markdown + text) then the partial credit as execute_result."""
    if cell.status == CellStatus.ERROR and not cell.checks:
        feedback = f"Sel {cell.grade_id} tidak dapat dinilai (kesalahan penilai); hubungi pengajar."
        return [
            nbformat.v4.new_output("display_data", data={"text/plain": feedback, "text/markdown": feedback}),
            nbformat.v4.new_output("execute_result", data={"text/plain": "0"}, execution_count=1),
        ]
    return [
        nbformat.v4.new_output(
            "display_data", data={"text/markdown": cell_markdown(cell), "text/plain": cell_text(cell)}
        ),
        nbformat.v4.new_output("execute_result", data={"text/plain": f"{cell.score:g}"}, execution_count=1),
    ]

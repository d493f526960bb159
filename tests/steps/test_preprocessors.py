"""Unit tests of our nbgrader steps on small fixture notebooks (fast: no kernel, no sandbox).

As in nbgrader's own preprocessor tests, a gradebook (SQLite in a temporary directory) is filled by
nbgrader's ``SaveCells`` from a tiny source notebook; each step then runs on a copy of that notebook
changed the way a submission can be.
"""

from __future__ import annotations

import copy
import os
import time

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearMarkScheme, ComputeChecksums, DeduplicateIds, SaveCells

from pe_course.record import NoteKind
from pe_course.sandbox.channel import LineClosed, LineReader, LineTimeout, LineTooLong
from pe_course.steps.execute import _safe_outputs
from pe_course.steps.forget_duplicates import ForgetDuplicates
from pe_course.steps.notes import notes
from pe_course.steps.overwrite_cells import RobustOverwriteCells
from pe_course.steps.pipeline import (
    AUTOGRADE_PREPROCESSORS,
    FEEDBACK_PREPROCESSORS,
    SANITIZE_PREPROCESSORS,
    adapted,
)
from pe_course.steps.repair_metadata import RepairMetadata

RUBRIC = "\n\n<!-- BEGIN MARK SCHEME -->\n**Rubrik penilaian:** 1 poin untuk dimensi tetap.\n<!-- END MARK SCHEME -->\n"


def meta(**fields) -> dict:
    return {
        "nbgrader": {
            "schema_version": 3,
            "task": False,
            "grade": False,
            "solution": False,
            "locked": False,
            **fields,
        }
    }


def source_notebook():
    cells = [
        nbformat.v4.new_markdown_cell("# Judul"),
        nbformat.v4.new_code_cell(
            "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION",
            metadata=meta(solution=True, grade_id="solution_f"),
        ),
        nbformat.v4.new_code_cell(
            "assert f(1) == 1", metadata=meta(grade=True, locked=True, points=2, grade_id="test_f")
        ),
        nbformat.v4.new_markdown_cell(
            "## Pertanyaan" + RUBRIC, metadata=meta(locked=True, grade_id="question_q")
        ),
        nbformat.v4.new_markdown_cell(
            "Jawaban contoh.", metadata=meta(grade=True, solution=True, points=2, grade_id="answer_q")
        ),
    ]
    return nbformat.v4.new_notebook(cells=cells)


@pytest.fixture
def resources(tmp_path):
    """A gradebook that knows notebook "nb" of assignment "a", as generate_assignment leaves it."""
    res = {
        "nbgrader": {
            "db_url": f"sqlite:///{tmp_path / 'gradebook.db'}",
            "assignment": "a",
            "notebook": "nb",
            "student": "ani",
        }
    }
    with Gradebook(res["nbgrader"]["db_url"]) as gb:
        gb.add_assignment("a")
    nb = source_notebook()
    nb, res = ComputeChecksums().preprocess(nb, res)
    SaveCells().preprocess(nb, res)
    return res


def released():
    """The student's copy: the rubric stripped and checksums recomputed, as generate_assignment does."""
    nb, _ = ClearMarkScheme(enforce_metadata=False).preprocess(source_notebook(), {})
    nb, _ = ComputeChecksums().preprocess(nb, {})
    return nb


def cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def test_the_rubric_is_restored_quietly_and_a_changed_question_is_not(resources, caplog):
    nb, _ = RobustOverwriteCells().preprocess(released(), copy.deepcopy(resources))
    assert RUBRIC.strip() in cell(nb, "question_q").source
    assert "has changed" not in caplog.text

    tampered = released()
    cell(tampered, "question_q").source = "Pertanyaan lain."
    nb, _ = RobustOverwriteCells().preprocess(tampered, copy.deepcopy(resources))
    assert RUBRIC.strip() in cell(nb, "question_q").source  # restored by nbgrader's own check ...
    assert "Attribute 'checksum' for cell question_q has changed" in caplog.text  # ... and reported


def test_a_deleted_test_cell_is_restored_after_its_nearest_surviving_neighbour(resources):
    def ids(nb):
        return [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]

    nb = released()
    del nb.cells[2]  # the test cell
    nb, _ = RobustOverwriteCells(add_missing_cells=True).preprocess(nb, copy.deepcopy(resources))
    assert ids(nb)[:3] == [None, "solution_f", "test_f"]
    assert [str(n) for n in notes(nb)] == ["restored-cell: test_f"]

    nb = released()
    del nb.cells[1:3]  # its neighbour too: nbgrader's own OverwriteCells fails with a KeyError here
    nb, _ = RobustOverwriteCells(add_missing_cells=True).preprocess(nb, copy.deepcopy(resources))
    assert ids(nb)[0] == "test_f" and ids(nb).count("test_f") == 1


def test_metadata_is_repaired_from_the_gradebook_not_from_the_submission(resources):
    nb = released()
    cell(nb, "test_f").metadata.nbgrader["points"] = 100  # a student granting themselves points
    cell(nb, "solution_f").metadata.nbgrader["schema_version"] = 99
    nb.cells.append(
        nbformat.v4.new_code_cell("x = 1", metadata=meta(grade=True, points=5, grade_id="test_extra"))
    )
    nb, _ = RepairMetadata().preprocess(nb, copy.deepcopy(resources))
    assert cell(nb, "test_f").metadata.nbgrader["points"] == 2
    assert cell(nb, "solution_f").metadata.nbgrader["schema_version"] == 3
    assert "nbgrader" not in nb.cells[-1].metadata
    kinds = [n.kind for n in notes(nb)]
    assert kinds.count(NoteKind.REPAIRED_METADATA) == 2 and kinds.count(NoteKind.DROPPED_METADATA) == 1


def test_a_duplicated_cell_counts_once_and_is_noted(resources):
    nb = released()
    nb.cells.insert(3, copy.deepcopy(cell(nb, "solution_f")))
    nb, res = DeduplicateIds().preprocess(nb, copy.deepcopy(resources))
    nb, _ = ForgetDuplicates().preprocess(nb, res)
    assert sum(c.metadata.get("nbgrader", {}).get("grade_id") == "solution_f" for c in nb.cells) == 1
    assert [n.kind for n in notes(nb)] == [NoteKind.DUPLICATE_CELL]


def test_only_plain_text_images_and_errors_come_back_from_the_sandbox():
    outputs = [
        {
            "output_type": "display_data",
            "data": {"text/html": "<script>steal()</script>", "text/plain": "ok"},
        },
        {"output_type": "display_data", "data": {"application/javascript": "steal()"}},
        {"output_type": "stream", "name": "stdout", "text": "halo\n"},
        {"output_type": "stream", "name": "weird", "text": "x"},
        {"output_type": "error", "ename": "ValueError", "evalue": "x" * 5000, "traceback": ["t"] * 80},
        "not an output",
    ]
    safe = _safe_outputs(outputs)
    assert [o["output_type"] for o in safe] == ["display_data", "stream", "error"]
    assert dict(safe[0]["data"]) == {"text/plain": "ok"}
    assert len(safe[2]["evalue"]) == 2000 and len(safe[2]["traceback"]) == 50
    assert _safe_outputs("nope") == []


def test_a_stream_split_into_messages_comes_back_as_one_block():
    """How the kernel cuts printed text into messages depends on timing; Jupyter shows one block, and
    so do the graded notebook and the feedback (the same submission gives the same outputs)."""
    piece = lambda name, text: {"output_type": "stream", "name": name, "text": text}  # noqa: E731
    image = {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}}
    outputs = [piece("stdout", "ValueError:"), piece("stdout", " T=5\n"), piece("stderr", "w\n"), image]
    outputs += [piece("stdout", "a\n"), piece("stdout", "b\n")]
    safe = _safe_outputs(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in safe] == [
        ("stream", "stdout", "ValueError: T=5\n"),
        ("stream", "stderr", "w\n"),
        ("display_data", None, None),
        ("stream", "stdout", "a\nb\n"),
    ]


def test_the_pipelines_are_nbgraders_defaults_with_our_steps_named():
    names = lambda steps: [s.__name__ for s in steps]  # noqa: E731
    assert names(SANITIZE_PREPROCESSORS) == [
        "RepairMetadata",
        "ClearOutput",
        "DeduplicateIds",
        "ForgetDuplicates",
        "OverwriteKernelspec",
        "RobustOverwriteCells",
        "CheckCellMetadata",
    ]
    assert names(AUTOGRADE_PREPROCESSORS)[:3] == ["SandboxedExecute", "ScoreWithGraders", "IgnorePattern"]
    assert "Execute" not in names(AUTOGRADE_PREPROCESSORS)
    assert names(FEEDBACK_PREPROCESSORS) == [
        "GetGrades",
        "ClearHiddenTests",
        "RegradeNotice",
        "RenderMath",
        "CSSHTMLHeaderPreprocessor",
    ]
    with pytest.raises(RuntimeError, match="no"):
        adapted([DeduplicateIds], replace={SaveCells: ForgetDuplicates})


def test_the_line_reader_bounds_time_and_size():
    read, write = os.pipe()
    try:
        reader = LineReader(read, max_bytes=64)
        os.write(write, b'{"a": 1}\n{"b"')
        assert reader.read_line(time.monotonic() + 1) == b'{"a": 1}'
        with pytest.raises(LineTimeout):
            reader.read_line(time.monotonic() + 0.05)  # half a line stays buffered
        os.write(write, b": 2}\n")
        assert reader.read_line(time.monotonic() + 1) == b'{"b": 2}'
        os.write(write, b"x" * 100)
        with pytest.raises(LineTooLong):
            reader.read_line(time.monotonic() + 1)
    finally:
        os.close(write)
    with pytest.raises(LineClosed):
        LineReader(read, 64).read_line(time.monotonic() + 1)
    os.close(read)


def test_the_runner_says_why_it_could_not_write_its_result(tmp_path):
    """A notebook whose executed copy could not be written (a full disk, a folder the kernel removed)
    used to come back as "hasil eksekusi tidak ditemukan" with no trace of why: the runner now puts
    the error in its reply, and the grader reads it as untrusted text (logged, never shown)."""
    from pe_course.sandbox.inside import nbexec
    from pe_course.steps.execute import _wait_line

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("reset"), nbformat.v4.new_code_cell("1")])
    written = tmp_path / "nb1.out.ipynb"
    assert nbexec._write(nbformat, nb, str(written)) is None
    assert len(nbformat.read(written, as_version=4).cells) == 1, "the reset cell is not in the result"
    failed = nbexec._write(nbformat, nb, str(tmp_path / "gone" / "nb2.out.ipynb"))
    assert failed is not None and failed.startswith("FileNotFoundError")

    read, write = os.pipe()
    try:
        os.write(write, b'{"done": "nb2.out.ipynb", "error": "OSError: [Errno 28] No space left"}\n')
        assert _wait_line(LineReader(read, 1024), 5) == ("line", "OSError: [Errno 28] No space left")
        os.write(write, b'{"done": "nb3.out.ipynb"}\n["not", "an", "object"]\n')
        reader = LineReader(read, 1024)
        assert _wait_line(reader, 5) == ("line", None)
        assert _wait_line(reader, 5) == ("line", None), "a planted line is not an error message"
        os.write(write, b'{"done": 1, "error": "' + b"x" * 900 + b'"}\n')
        assert _wait_line(LineReader(read, 4096), 5) == ("line", "x" * 500)
        assert _wait_line(LineReader(read, 1024), 0.1) == ("timeout", None)
        os.close(write)
        write = -1
        assert _wait_line(LineReader(read, 1024), 5) == ("closed", None)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)

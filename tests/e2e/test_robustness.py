"""Careless and broken submissions through real ``nbgrader autograde positional-encoding``.

All students are graded by real nbgrader runs over course copies (two copies autograded side by
side, one per core); each test below then looks at one student's gradebook scores,
``.grading.json`` record and nbgrader's log. A student must lose points only for what is really
missing or wrong, every other student must still be graded, and each repair leaves a clear message.

Observed nbgrader behaviour worth knowing: ``nbgrader autograde`` goes on past a student whose
notebook raises, removes that student's whole ``autograded/<student>`` folder, and exits with
status 1 at the end ("There was an error processing assignment ... for student ..."); a missing
notebook is not an error (its grades are set to 0 with a "No submitted file" warning).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import GRADERS, NOTEBOOKS, REPO, CourseCopy, notes_of, reference_nb, with_code

from pe_course.course.notebooks import load_reference
from pe_course.engine.discovery import load_suite

pytestmark = pytest.mark.slow

NB = "01_embedding"
FULL_01 = {"test_embed": 3.0, "test_one_hot": 1.0, "test_embed_backward": 3.0}
WRONG_EMBED = "import numpy as np\n\ndef embed(ids, tok_table, pos_table):\n    return tok_table[np.asarray(ids, dtype=int)]\n"


def gid(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, dict) else None


def index_of(nb, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if gid(c) == grade_id)


# --------------------------------------------------------------------------------------------
# The submissions
# --------------------------------------------------------------------------------------------
def deleted_test_cells():
    nb = reference_nb(NB)
    nb.cells = [c for c in nb.cells if gid(c) not in ("test_embed", "test_one_hot")]
    return nb


def deleted_solution_and_test():
    nb = reference_nb(NB)
    nb.cells = [c for c in nb.cells if gid(c) not in ("solution_embed", "test_embed")]
    return nb


def duplicated_solution_cell():
    """The student duplicated the solution cell (metadata and all) and fixed the copy below."""
    nb = reference_nb(NB)
    i = index_of(nb, "solution_embed")
    fixed = copy.deepcopy(nb.cells[i])
    fixed["id"] = "duplicated-solution"
    nb.cells[i].source = WRONG_EMBED
    nb.cells.insert(i + 1, fixed)
    return nb


def reordered_cells():
    nb = reference_nb(NB)
    cell = nb.cells.pop(index_of(nb, "solution_embed"))
    nb.cells.append(cell)  # defined after its test cell and after the demo cells that use it
    return nb


def solution_retyped_to_markdown():
    nb = reference_nb(NB)
    i = index_of(nb, "solution_embed")
    old = nb.cells[i]
    nb.cells[i] = nbformat.v4.new_markdown_cell(old.source, metadata=old.metadata)
    return nb


def pasted_into_fresh_notebook():
    ref = reference_nb(NB)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(c.source)
        for c in ref.cells
        if c.cell_type == "code" and not (gid(c) or "").startswith("test_")
    ]
    return nb


def syntax_error_in_embed():
    return with_code(reference_nb(NB), "embed", "def embed(ids, tok_table, pos_table)\n    return ids\n")


def unknown_schema_version():
    nb = reference_nb(NB)
    for grade_id in ("solution_embed", "test_embed"):
        nb.cells[index_of(nb, grade_id)].metadata.nbgrader["schema_version"] = 99
    return nb


def duplicate_grade_ids():
    """Two extra copies of the test_embed cell (same grade id), one before and one far after it."""
    nb = reference_nb(NB)
    i = index_of(nb, "test_embed")
    first, second = copy.deepcopy(nb.cells[i]), copy.deepcopy(nb.cells[i])
    first["id"], second["id"] = "dup-test-1", "dup-test-2"
    nb.cells.insert(i, first)
    nb.cells.insert(index_of(nb, "solution_one_hot") + 1, second)
    return nb


def extra_graded_cell():
    """A cell the student marked as graded, with a grade id nbgrader does not know and many points."""
    nb = reference_nb(NB)
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "print('bonus')",
            metadata={
                "nbgrader": {
                    "grade": True,
                    "grade_id": "test_bonus",
                    "locked": True,
                    "points": 50,
                    "schema_version": 3,
                    "solution": False,
                    "task": False,
                }
            },
        )
    )
    return nb


def forged_grader_notes():
    """Notebook metadata written to look like the graders' own notes in the record."""
    nb = reference_nb(NB)
    nb.metadata["pe_course"] = {"notes": ["FORGED-NOTE: grader-error", "FORGED-NOTE: execution: timeout"]}
    return nb


def solution_flagged_as_graded():
    """The solution cell's metadata says it is a graded cell worth points (it is not)."""
    nb = reference_nb(NB)
    nb.cells[index_of(nb, "solution_embed")].metadata.nbgrader.update(grade=True, points=10)
    return nb


CASES = {
    # student: (group, notebooks)
    "a_full": (0, {n: reference_nb(n) for n in NOTEBOOKS}),
    "b_deleted_tests": (1, {NB: deleted_test_cells()}),
    "c_deleted_solution": (1, {NB: deleted_solution_and_test()}),
    "d_duplicated_solution": (1, {NB: duplicated_solution_cell()}),
    "e_reordered": (0, {NB: reordered_cells()}),
    "f_markdown": (1, {NB: solution_retyped_to_markdown()}),
    "g_fresh_notebook": (0, {NB: pasted_into_fresh_notebook()}),
    "h_syntax_error": (1, {NB: syntax_error_in_embed()}),
    "i_empty_file": (0, {NB: b""}),
    "j_invalid_json": (1, {NB: b'{"cells": [ ,,, '}),
    "k_not_a_notebook": (0, {NB: json.dumps({"hello": "world", "cells": 3})}),
    "l_schema_99": (1, {NB: unknown_schema_version()}),
    "m_duplicate_ids": (0, {NB: duplicate_grade_ids()}),
    "n_missing_notebook": (1, {"02_sinusoidal": reference_nb("02_sinusoidal")}),
    "o_extra_graded_cell": (0, {NB: extra_graded_cell()}),
    "p_forged_notes": (1, {NB: forged_grader_notes()}),
    "q_solution_flagged_graded": (1, {NB: solution_flagged_as_graded()}),
}


@pytest.fixture(scope="module")
def run(_course_template, tmp_path_factory):
    """Two course copies, each with half of the students, autograded concurrently (one run each)."""
    courses = []
    for group in (0, 1):
        root = tmp_path_factory.mktemp(f"robust-{group}") / "course"
        shutil.copytree(_course_template, root)
        course = CourseCopy(root)
        for student, (g, notebooks) in CASES.items():
            if g == group:
                course.submit(student, notebooks)
        courses.append(course)
    exe = Path(sys.executable).with_name("nbgrader")
    procs = [
        subprocess.Popen(
            [str(exe), "autograde", "positional-encoding"],
            cwd=c.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        for c in courses
    ]
    logs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=540)
        logs.append(out)
    return {
        "courses": courses,
        "returncodes": [p.returncode for p in procs],
        "logs": logs,
        "course_of": {s: courses[g] for s, (g, _) in CASES.items()},
        "log_of": {s: logs[g] for s, (g, _) in CASES.items()},
    }


@pytest.fixture(scope="module")
def suite_max(_course_template):
    suite = load_suite(_course_template / GRADERS.relative_to(REPO))
    reference = load_reference(_course_template / "source" / "positional-encoding")
    return {
        nb: {f"test_{fn}": suite.max_score(reference, fn) for fn in fns}
        for nb, fns in suite.notebooks.items()
    }


def gradebook(run, student: str, notebook: str = NB) -> dict[str, float]:
    course = run["course_of"][student]
    return {
        g: s
        for (st, nb, g), s in course.scores().items()
        if st == student and nb == notebook and g.startswith("test_")
    }


def record(run, student: str, notebook: str = NB) -> dict:
    return run["course_of"][student].record(student, notebook)


def record_scores(rec: dict) -> dict[str, float]:
    return {c["grade_id"]: c["score"] for c in rec["cells"]}


def student_log(run, student: str) -> str:
    """nbgrader's log lines about this student's submission."""
    lines = run["log_of"][student].splitlines()
    out, mine = [], False
    for line in lines:
        if "submitted/" in line or "autograded/" in line:
            mine = f"/{student}/" in line
        if mine or f"'{student}'" in line or f"/{student}/" in line:
            out.append(line)
    return "\n".join(out)


def assert_graded(run, student: str, expected: dict[str, float], notebook: str = NB) -> dict:
    rec = record(run, student, notebook)
    assert record_scores(rec) == expected, notes_of(rec)
    assert gradebook(run, student, notebook) == expected
    return rec


# --------------------------------------------------------------------------------------------
# One test per case
# --------------------------------------------------------------------------------------------
def test_a_reference_notebooks_get_full_marks(run, suite_max):
    for notebook in NOTEBOOKS:
        rec = assert_graded(run, "a_full", suite_max[notebook], notebook)
        # no cell error in the graders' worker either: 03's and 04's setup_helpers found pe_tables.npz
        assert rec["notes"] == [] and rec["cell_errors"] == [] and rec["score"] == rec["max_score"], (
            student_log(run, "a_full")  # "Sandboxed execution failed: …" names what was missing
        )


@pytest.mark.parametrize("notebook", ["03_rotation", "04_similarity"])
def test_a_sandboxed_run_has_the_data_files_beside_the_notebook(run, notebook):
    """The feedback run in the sandbox loads pe_tables.npz as the student's JupyterLab does: the
    setup cell and every demo cell that uses the stored tables ran without an error and printed."""
    course = run["course_of"]["a_full"]
    nb = nbformat.read(course.root / "autograded" / "a_full" / "positional-encoding" / f"{notebook}.ipynb", 4)
    errors = {
        gid(c): [o.get("ename") for o in c.outputs if o.output_type == "error"]
        for c in nb.cells
        if c.cell_type == "code" and not (gid(c) or "").startswith("test_")
    }
    assert {g: e for g, e in errors.items() if e} == {}, student_log(run, "a_full")
    uses = [
        c for c in nb.cells if c.cell_type == "code" and ("_pe_table(" in c.source or "_omega(" in c.source)
    ]
    assert len(uses) >= 5, [gid(c) for c in uses]
    for c in uses:
        if gid(c) != "setup_helpers" and (gid(c) or "").startswith("demo_"):
            assert c.outputs, f"{notebook} {gid(c)}: no output in the sandboxed run\n" + student_log(
                run, "a_full"
            )
    if notebook == "03_rotation":
        recap = next(c for c in nb.cells if gid(c) == "demo_recap")
        text = "".join(o.get("text", "") for o in recap.outputs)
        assert "Positional encoding untuk 6 posisi" in text and "omega = 0.1000" in text, text


def test_b_deleted_test_cells_are_restored_and_scored(run):
    rec = assert_graded(run, "b_deleted_tests", FULL_01)
    assert {"restored-cell: test_embed", "restored-cell: test_one_hot"} <= set(notes_of(rec))
    assert "Missing grade cell test_embed" in student_log(run, "b_deleted_tests")


def test_c_deleted_solution_and_test_cell_costs_only_that_function(run):
    rec = assert_graded(run, "c_deleted_solution", {**FULL_01, "test_embed": 0.0})
    assert "restored-cell: test_embed" in notes_of(rec)
    status = {c["grade_id"]: c["status"] for c in rec["cells"]}
    assert status == {"test_embed": "missing-function", "test_one_hot": "ok", "test_embed_backward": "ok"}


def test_d_duplicated_solution_cell_last_definition_wins(run):
    """Regression test for a fixed bug, which was: DeduplicateIds leaves ``metadata.nbgrader == {}`` on the earlier copy, and nbgrader's
    ``OverwriteCells.add_missing_task_cells`` (not overridden by RobustOverwriteCells) then fails with
    ``KeyError: 'grade_id'``: the student's whole assignment is dropped."""
    assert_graded(run, "d_duplicated_solution", FULL_01)
    assert "exists multiple times" in student_log(run, "d_duplicated_solution")


def test_e_function_defined_after_its_test_cell(run):
    assert_graded(run, "e_reordered", FULL_01)


def test_f_solution_retyped_to_markdown(run):
    """nbgrader turns a known solution cell back into code: the code in it is graded."""
    rec = assert_graded(run, "f_markdown", FULL_01)
    assert any(n.startswith("repaired-metadata") and "solution_embed" in n for n in notes_of(rec))
    assert "cell_type" in student_log(run, "f_markdown")


def test_g_code_pasted_into_fresh_notebook(run):
    rec = assert_graded(run, "g_fresh_notebook", FULL_01)
    assert {
        "restored-cell: test_embed",
        "restored-cell: test_one_hot",
        "restored-cell: test_embed_backward",
    } <= set(notes_of(rec))


def test_h_syntax_error_costs_only_that_function(run):
    rec = assert_graded(run, "h_syntax_error", {**FULL_01, "test_embed": 0.0})
    assert [e["error"] for e in rec["cell_errors"]] == ["SyntaxError"]


@pytest.mark.parametrize("student", ["i_empty_file", "j_invalid_json", "k_not_a_notebook"])
def test_unreadable_files_score_zero_with_a_note(run, student):
    rec = assert_graded(run, student, {k: 0.0 for k in FULL_01})
    assert any(n.startswith("unreadable-notebook") for n in notes_of(rec)), notes_of(rec)
    assert "Unreadable notebook" in student_log(run, student)
    assert (
        run["course_of"][student].root / "submitted" / student / "positional-encoding" / f"{NB}.ipynb"
    ).exists()


def test_l_unknown_schema_version_is_repaired(run):
    rec = assert_graded(run, "l_schema_99", FULL_01)
    repaired = [n for n in notes_of(rec) if n.startswith("repaired-metadata")]
    assert len(repaired) == 2 and all("SchemaTooNewError" in n for n in repaired)


def test_m_duplicate_grade_ids(run):
    """Regression test for a fixed bug, which was: same KeyError 'grade_id' as (d): the duplicates' emptied nbgrader metadata crashes
    ``OverwriteCells.add_missing_task_cells``."""
    assert_graded(run, "m_duplicate_ids", FULL_01)
    assert "exists multiple times" in student_log(run, "m_duplicate_ids")


def test_n_missing_notebook_scores_zero_others_graded(run, suite_max):
    assert gradebook(run, "n_missing_notebook") == {k: 0.0 for k in FULL_01}
    assert not (
        run["course_of"]["n_missing_notebook"].root
        / "autograded"
        / "n_missing_notebook"
        / "positional-encoding"
        / f"{NB}.grading.json"
    ).exists()
    assert_graded(run, "n_missing_notebook", suite_max["02_sinusoidal"], "02_sinusoidal")
    assert "No submitted file" in student_log(run, "n_missing_notebook")


def test_o_extra_graded_cell_with_unknown_id(run):
    """Regression test for a fixed bug, which was: OverwriteCells deletes the unknown ``grade_id`` but keeps the rest of the nbgrader
    metadata; ``add_missing_task_cells`` then raises ``KeyError: 'grade_id'`` and the student's whole
    assignment is dropped (instead of ignoring the bogus cell)."""
    assert_graded(run, "o_extra_graded_cell", FULL_01)
    notes = notes_of(record(run, "o_extra_graded_cell"))
    assert any(n.startswith("dropped-metadata") and "unknown grade id" in n for n in notes), notes


def test_p_student_cannot_forge_grader_notes(run):
    """Regression test for a fixed bug, which was: ``_notes(nb)`` trusts ``nb.metadata['pe_course']['notes']`` of the submission, so a student
    can put any text (e.g. 'grader-error') into the instructor's .grading.json record."""
    rec = assert_graded(run, "p_forged_notes", FULL_01)
    assert not any("FORGED-NOTE" in n for n in notes_of(rec)), notes_of(rec)


def test_q_solution_cell_flagged_as_graded(run):
    rec = assert_graded(run, "q_solution_flagged_graded", FULL_01)
    assert rec["score"] == 7.0


# --------------------------------------------------------------------------------------------
# The run as a whole
# --------------------------------------------------------------------------------------------
def failed_students(run) -> set[str]:
    marker = "There was an error processing assignment 'positional-encoding' for student '"
    return {
        line.split(marker, 1)[1].rstrip("'")
        for log in run["logs"]
        for line in log.splitlines()
        if marker in line
    }


def test_every_other_student_is_graded(run):
    """A failing student never stops the batch: every other readable submission has a record."""
    failed = failed_students(run)
    assert failed <= set(CASES), failed
    for student, (_, notebooks) in CASES.items():
        if student in failed:
            continue  # reported by test_autograde_completes_with_status_zero and the case's own test
        course = run["course_of"][student]
        for notebook in notebooks:
            path = course.root / "autograded" / student / "positional-encoding" / f"{notebook}.grading.json"
            assert path.exists(), f"{student}/{notebook} was not graded"


def test_autograde_completes_with_status_zero(run):
    """nbgrader exits 1 as soon as any student failed; with the plug-ins nobody should fail."""
    for rc, log in zip(run["returncodes"], run["logs"], strict=True):
        failed = [line for line in log.splitlines() if "There was an error processing assignment '" in line]
        assert rc == 0 and failed == [], "\n".join(failed)

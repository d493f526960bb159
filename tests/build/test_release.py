"""The student release: in sync with the source, safe to hand out, runnable, scored and Indonesian.

- golden comparison: the committed ``release/`` equals a fresh ``nbgrader generate_assignment``
  (``pe-course release`` refreshes it), and the comparison notices a difference;
- ``release_problems`` is empty for the committed release and catches deliberately broken copies;
- no solution code or hidden test text in the release; every stub raises ``NotImplementedError``,
  both in a plain namespace and in a real kernel, where nothing else may fail;
- committed notebooks carry no outputs; the nbgrader metadata gives each graded function one
  solution cell and one test cell worth the graders' maximum, and the points table of the chapter;
- student-facing text (markdown, hints, visible assert messages) is Indonesian.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import COURSE, FUNCTIONS, GRADERS, NOTEBOOKS, REPO, beside_the_notebooks, release_nb
from nbclient import NotebookClient

from pe_course.build import pe_tables, precision
from pe_course.build.points_table import graded_cells, notebook_points, points_table, readme_points_table
from pe_course.build.release import release_diff, release_problems
from pe_course.course import Course
from pe_course.course.datafiles import MAX_DATA_BYTES, DataFileError, data_files
from pe_course.course.notebooks import working_directory
from pe_course.engine.discovery import load_suite

SOURCE = REPO / "source" / "positional-encoding"
RELEASE = REPO / "release" / "positional-encoding"
SOLUTION = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
REFRESH = "pe-course release"

# Small valid arguments for every graded function (checked against the reference below).
CALLS = {
    "embed": lambda: ([2, 0, 2], np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]]), np.zeros((4, 2))),
    "one_hot": lambda: ([2, 0, 2], 3),
    "embed_backward": lambda: ([2, 0, 2], np.ones((3, 2)), 3, 4),
    "frequencies": lambda: (8,),
    "positional_encoding": lambda: (6, 8),
    "rotation_matrix": lambda: (0.3,),
    "shift_encoding": lambda: (np.array([np.sin(1.0), np.cos(1.0)]), 2),
    "apply_rope": lambda: (np.ones((3, 2)),),
    "rope_scores": lambda: (np.ones((3, 2)), np.ones((2, 2))),
    "position_similarity": lambda: (np.eye(3), 0),
    "offset_similarity": lambda: (1, 8),
    "self_attention": lambda: (np.eye(2),),
}


def source_nb(name: str):
    return nbformat.read(SOURCE / f"{name}.ipynb", as_version=4)


def meta(c) -> dict:
    return c.get("metadata", {}).get("nbgrader", {})


def gid(c) -> str:
    return meta(c).get("grade_id", "")


def solution_functions(nb) -> list[str]:
    return [gid(c)[len("solution_") :] for c in nb.cells if c.cell_type == "code" and meta(c).get("solution")]


def region_only_lines(nb, markers: tuple[str, str]) -> set[str]:
    """Stripped lines that occur only between ``markers`` in ``nb`` (nowhere else in it)."""
    inside, elsewhere = set(), set()
    for c in nb.cells:
        active = False
        for line in c.source.splitlines():
            text = line.strip()
            if text in markers:
                active = text == markers[0]
            elif text:
                (inside if active else elsewhere).add(text)
    return inside - elsewhere


def release_lines(nb) -> set[str]:
    return {line.strip() for c in nb.cells for line in c.source.splitlines() if line.strip()}


# =============================================================================================
# 1. Golden comparison with a fresh nbgrader generate_assignment
# =============================================================================================
def test_release_matches_fresh_generate_assignment():
    differ = release_diff(COURSE)
    assert differ == [], (
        f"release/ is out of date: {', '.join(differ)} differ from a fresh `nbgrader generate_assignment` "
        f"of source/. Refresh the committed copy with: {REFRESH}"
    )


def _scratch_course(root: Path) -> Course:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(SOURCE, root / "source" / "positional-encoding", ignore=ignore)
    shutil.copytree(RELEASE, root / "release" / "positional-encoding", ignore=ignore)
    shutil.copytree(REPO / "graders", root / "graders", ignore=ignore)
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    return Course(root)


def test_release_diff_notices_edits_but_not_cell_ids(tmp_path):
    """The golden check can fail: an edited release notebook differs, new cell ids alone do not."""
    course = _scratch_course(tmp_path)
    edited = release_nb("01_embedding")
    next(c for c in edited.cells if c.cell_type == "markdown").source += "\n\nDiedit dengan tangan."
    nbformat.write(edited, course.release / "01_embedding.ipynb")
    renumbered = release_nb("02_sinusoidal")
    for index, c in enumerate(renumbered.cells):
        c.id = f"fresh-id-{index}"
    nbformat.write(renumbered, course.release / "02_sinusoidal.ipynb")
    (course.release / "04_similarity.ipynb").unlink()
    (course.release / pe_tables.FILE_NAME).write_bytes(b"PK")
    assert release_diff(course) == ["01_embedding.ipynb", "04_similarity.ipynb", pe_tables.FILE_NAME]


def test_release_diff_notices_stale_public_checks(tmp_path):
    """Public cases edited by hand, or graders changed without `pe-course release`, are noticed."""
    course = _scratch_course(tmp_path)
    shipped = course.release / "public_checks" / "01_embedding.json"
    shipped.write_text(
        shipped.read_text(encoding="utf-8").replace("[2, 0, 2]", "[2, 0, 1]"), encoding="utf-8"
    )
    cases = course.graders / "01_embedding" / "cases" / "one_hot.json"
    cases.write_text(
        cases.read_text(encoding="utf-8").replace("[2, 0, 2], 3", "[2, 1, 2], 3"), encoding="utf-8"
    )
    assert release_diff(course) == [
        "source/positional-encoding/public_checks/01_embedding.json",
        "release/positional-encoding/public_checks/01_embedding.json",
    ]


def test_release_diff_tolerates_a_last_stored_digit_but_not_a_changed_value(tmp_path):
    """An expected value one unit off in its last stored digit (where another CPU's last bits round to
    the other side) is the same release; one changed by 1e-9 is not (pe_course.build.precision)."""
    course = _scratch_course(tmp_path)
    folder = course.release / "public_checks"
    last_digit = 10.0 ** (1 - precision.DIGITS)  # of a value in [1, 10)
    for name, change in (("02_sinusoidal.json", last_digit), ("04_similarity.json", 1e-9)):
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        values = next(iter(data["functions"].values()))["cases"][0]["expected"]["value"]["array"]
        assert values[0] == 1.0
        values[0] = float(f"{1.0 + change:.{precision.DIGITS - 1}e}")
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    assert release_diff(course) == ["release/positional-encoding/public_checks/04_similarity.json"]


# =============================================================================================
# 2. release_problems: empty for the committed release, and it can fail
# =============================================================================================
def test_release_problems_empty_for_committed_release():
    problems = release_problems(RELEASE, SOURCE)
    assert problems == [], "the committed release is unsafe:\n- " + "\n- ".join(problems)


def source_cell_lines(name: str, grade_id: str) -> list[str]:
    c = next(c for c in source_nb(name).cells if gid(c) == grade_id)
    return c.source.splitlines()


def _paste_solution_line(nb):
    stub = next(c for c in nb.cells if gid(c) == "solution_embed")
    leaked = next(
        line
        for line in source_cell_lines("01_embedding", "solution_embed")
        if line.strip().startswith("return ")
    )
    stub.source = stub.source.replace(
        "    raise NotImplementedError(", f"{leaked}\n    raise NotImplementedError("
    )


def _add_hidden_marker(nb):
    c = next(c for c in nb.cells if gid(c) == "test_one_hot")
    c.source += "\n### BEGIN HIDDEN TESTS\nassert one_hot([0], 1).shape == (1, 1)\n### END HIDDEN TESTS"


def _leak_rubric(nb):
    c = next(c for c in nb.cells if gid(c) == "question_untrained_positions")
    c.source += "\n\n**Rubrik penilaian:** 1 poin untuk dimensi yang tetap d."


def _add_outputs(nb):
    c = next(c for c in nb.cells if gid(c) == "demo_lookup")
    c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="sama? True\n")]
    c.execution_count = 3


def _add_execution_count(nb):
    next(c for c in nb.cells if gid(c) == "setup_tables").execution_count = 1


def _remove_stub(nb):
    c = next(c for c in nb.cells if gid(c) == "solution_one_hot")
    c.source = c.source.replace("raise NotImplementedError(", "pass  # (")


@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        (_paste_solution_line, "solution text leaked"),
        (_add_hidden_marker, "hidden-test markers"),
        (_leak_rubric, "rubric"),
        (_add_outputs, "has outputs"),
        (_add_execution_count, "has outputs"),
        (_remove_stub, "without a NotImplementedError stub"),
    ],
)
def test_release_problems_reports_broken_release(tmp_path, breakage, expected):
    broken = tmp_path / "release"
    shutil.copytree(RELEASE, broken)
    nb = release_nb("01_embedding")
    breakage(nb)
    nbformat.write(nb, broken / "01_embedding.ipynb")
    problems = release_problems(broken, SOURCE)
    assert problems, f"{breakage.__name__}: release_problems found nothing"
    assert all(p.startswith("01_embedding.ipynb") for p in problems), problems
    assert any(expected in p for p in problems), problems


def test_release_problems_reports_missing_notebook(tmp_path):
    broken = tmp_path / "release"
    shutil.copytree(RELEASE, broken)
    (broken / "03_rotation.ipynb").unlink()
    problems = release_problems(broken, SOURCE)
    assert len(problems) == 1 and "differ from source notebooks" in problems[0], problems


def _pickled_npz(folder: Path) -> None:
    np.savez(folder / pe_tables.FILE_NAME, table=np.array([{"kode": "bukan data"}], dtype=object))


@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        (lambda f: (f / pe_tables.FILE_NAME).unlink(), "differ from source data files"),
        (lambda f: (f / pe_tables.FILE_NAME).write_bytes(b"PK rusak"), "differs from source/"),
        (_pickled_npz, "not a NumPy archive of plain arrays"),
        (lambda f: (f / "catatan.txt").write_text("x"), "only data files"),
        (lambda f: (f / "data.npz").symlink_to(f / pe_tables.FILE_NAME), "not a regular file"),
        (lambda f: (f / "besar.npz").write_bytes(b"0" * (MAX_DATA_BYTES + 1)), "over the limit"),
    ],
)
def test_release_problems_reports_bad_data_files(tmp_path, breakage, expected):
    """A data file beside the notebooks must be the source's, plain arrays, regular and small."""
    broken = tmp_path / "release"
    shutil.copytree(RELEASE, broken)
    breakage(broken)
    problems = release_problems(broken, SOURCE)
    assert any(expected in p for p in problems), problems
    if expected in ("only data files", "not a regular file", "over the limit"):
        with pytest.raises(DataFileError, match=expected):
            data_files(broken)  # and the sandbox is not given it


def test_pe_tables_are_current():
    """The shipped tables are what ``python -m pe_course.build.pe_tables`` writes (02's formula, base 10000)."""
    fresh = pe_tables.tables_bytes(pe_tables.build_tables())
    assert (SOURCE / pe_tables.FILE_NAME).read_bytes() == fresh, (
        "source/positional-encoding/pe_tables.npz is out of date: run `python -m pe_course.build.pe_tables`, "
        f"then {REFRESH}"
    )
    assert data_files(RELEASE) == {pe_tables.FILE_NAME: fresh}


# Every (length, d_model) that 03 and 04 take from the stored tables (demos, visible checks, prose).
TABLES_USED = {
    "03_rotation": [(6, 8), (12, 8), (5, 8), (8, 8), (20, 8), (1003, 8), (203, 8), (24, 16)],
    "04_similarity": [(50, 32), (1000, 32), (200, 32), (3, 8)],
}


def _loader(name: str) -> dict:
    """The release's setup cells of ``name`` run as the student runs them: beside the data file."""
    namespace: dict = {"__name__": f"loader_{name}"}
    with working_directory(RELEASE):
        for c in release_nb(name).cells:
            if c.cell_type == "code" and "setup" in c.get("metadata", {}).get("tags", []):
                exec(compile(_plain(c.source), f"<{name} {gid(c)}>", "exec"), namespace)  # noqa: S102 (our release)
    return namespace


@pytest.mark.parametrize("name", sorted(TABLES_USED))
def test_stored_tables_give_the_tables_the_notebook_uses(name, reference):
    """_pe_table and _omega give 02's table for every size the notebook uses (NumPy's sin, cos and power
    here, within a few ulp of the stored, correctly rounded ones: see pe_course.build.pe_tables), and a clear
    message for one that is not stored; the loader computes nothing
    (no sine, no power)."""
    ns = _loader(name)
    loader = next(c for c in release_nb(name).cells if gid(c) == "setup_helpers").source
    tree = ast.parse(loader)
    computing = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow))
        or (
            isinstance(node, (ast.Attribute, ast.Name))
            and getattr(node, "attr", getattr(node, "id", None)) in ("sin", "cos", "exp", "power", "arange")
        )
    ]
    assert computing == [], f"the loader must not compute the PE: {computing}"
    # NumPy's sin, cos and power are within a few ulp of the correctly rounded ones; an angle p * omega
    # is below 1003, where one ulp is 1.1e-13: far below this, far above it a changed formula.
    close = {"rtol": 0.0, "atol": 1e-12}
    for length, d_model in TABLES_USED[name]:
        table = ns["_pe_table"](length, d_model)
        assert table.shape == (length, d_model)
        assert np.allclose(table, reference["positional_encoding"](length, d_model), **close)
        assert np.allclose(ns["_omega"](d_model), reference["frequencies"](d_model), **close)
        assert np.array_equal(table, ns["_pe_table"](1003, d_model)[:length]), "a row depends on the length"
    used = set(re.findall(r"_pe_table\((\d+), (\d+)\)", "".join(c.source for c in release_nb(name).cells)))
    assert {(int(a), int(b)) for a, b in used} <= set(TABLES_USED[name]), "a size missing from TABLES_USED"
    with pytest.raises(ValueError, match="tidak tersimpan"):
        ns["_pe_table"](4, 12)
    with pytest.raises(ValueError, match="hanya berisi 1003 posisi"):
        ns["_pe_table"](1004, 8)
    with pytest.raises(ValueError, match="tidak tersimpan"):
        ns["_omega"](6)


def test_loader_says_where_the_data_file_belongs(tmp_path):
    """Without pe_tables.npz beside the notebook the setup cell says, in Indonesian, what to do."""
    with (
        working_directory(tmp_path),
        pytest.raises(FileNotFoundError, match="tidak ditemukan di folder notebook"),
    ):
        namespace: dict = {}
        for c in release_nb("03_rotation").cells:
            if "setup" in c.get("metadata", {}).get("tags", []):
                exec(compile(_plain(c.source), "<03 setup>", "exec"), namespace)  # noqa: S102 (our release)


# =============================================================================================
# 3. No solutions or hidden tests; every stub raises NotImplementedError
# =============================================================================================
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_has_no_solution_code(name):
    only_in_solutions = region_only_lines(source_nb(name), SOLUTION)
    assert only_in_solutions, f"{name}: no solution regions found in the source (marker spelling?)"
    leaked = release_lines(release_nb(name)) & only_in_solutions
    assert leaked == set(), f"{name}: solution code in the release: {sorted(leaked)}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_inert_hidden_tests_in_source_or_release(name):
    """graders/ is the single source of hidden checks: nothing in source/ may look like grading that
    is not (nbgrader would also warn that every test cell's checksum changed on each autograde)."""
    assert region_only_lines(source_nb(name), HIDDEN) == set(), f"{name}: hidden-test region in the source"
    text = "\n".join(c.source for c in release_nb(name).cells)
    assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text and "END SOLUTION" not in text


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_written_answers_are_stubs(name):
    stub = COURSE.config().ClearSolutions.text_stub
    answers = {
        gid(c): c for c in source_nb(name).cells if c.cell_type == "markdown" and meta(c).get("solution")
    }
    released = {
        gid(c): c for c in release_nb(name).cells if c.cell_type == "markdown" and meta(c).get("solution")
    }
    assert set(released) == set(answers)
    lines = release_lines(release_nb(name))
    for grade_id, c in released.items():
        assert c.source.strip() == stub, f"{name} {grade_id}: the example answer was not replaced"
        example = {line.strip() for line in answers[grade_id].source.splitlines() if len(line.strip()) > 20}
        assert not (lines & example), f"{name} {grade_id}: example answer text in the release"


def _plain(source: str) -> str:
    """A notebook cell as plain Python (line magics such as %matplotlib dropped)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_stubs_raise_not_implemented(name, reference):
    nb = release_nb(name)
    functions = solution_functions(nb)
    assert functions and set(functions) <= set(CALLS), (
        f"{name}: no call arguments for {set(functions) - set(CALLS)}"
    )
    namespace = _loader(name)
    for fn in functions:
        c = next(c for c in nb.cells if gid(c) == f"solution_{fn}")
        assert "raise NotImplementedError(" in c.source, f"{name} solution_{fn}: no NotImplementedError stub"
        exec(compile(_plain(c.source), f"<{name} solution_{fn}>", "exec"), namespace)  # noqa: S102 (the stub only)
        assert callable(namespace.get(fn)), f"{name} solution_{fn} does not define {fn}"
        reference[fn](*CALLS[fn]())  # the arguments are valid: the reference solution accepts them
        with pytest.raises(NotImplementedError):
            namespace[fn](*CALLS[fn]())


# =============================================================================================
# 4. The release in a real kernel: only NotImplementedError
# =============================================================================================
async def _execute(path: Path, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=120, allow_errors=True, resources={"metadata": {"path": str(cwd)}}
    )
    await client.async_execute()
    return nb


async def _execute_all(root: Path) -> dict:
    for name in NOTEBOOKS:
        beside_the_notebooks(RELEASE, root / name)  # data and public checks, as the student has them
    results = await asyncio.gather(*(_execute(RELEASE / f"{name}.ipynb", root / name) for name in NOTEBOOKS))
    return dict(zip(NOTEBOOKS, results, strict=True))


@pytest.fixture(scope="module")
def executed_release(tmp_path_factory) -> dict:
    """Each release notebook executed once (concurrently) with allow_errors=True."""
    return asyncio.run(_execute_all(tmp_path_factory.mktemp("executed-release")))


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_executes_with_only_not_implemented_errors(executed_release, name):
    nb = executed_release[name]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{name}: not every code cell ran"
    errors = {gid(c): [o for o in c.outputs if o.output_type == "error"] for c in code}
    expected = {"NotImplementedError", "PublicCheckFailed"}  # the stubs; the public checks failing on them
    other = {
        g: [e.ename for e in errs] for g, errs in errors.items() if any(e.ename not in expected for e in errs)
    }
    assert other == {}, f"{name}: cells failing for another reason than the stubs: {other}"
    for c in code:
        if "setup" in c.get("metadata", {}).get("tags", []):
            assert errors[gid(c)] == [], f"{name} {gid(c)}: a setup cell fails"
    for fn in solution_functions(nb):
        assert [e.ename for e in errors[f"test_{fn}"]] == ["PublicCheckFailed"], (
            f"{name} test_{fn}: the public check should fail on the stub of {fn}"
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_with_the_stubs_every_public_check_fails_every_clause_with_its_message(
    executed_release, name, reference
):
    """What a student sees before writing anything: every clause failed, and why."""
    from pe_course.public_checks import plain

    nb = executed_release[name]
    for fn in solution_functions(nb):
        c = next(c for c in nb.cells if gid(c) == f"test_{fn}")
        out = "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        for clause in reference.contracts[fn].values():
            assert f"[gagal] {clause.id} (0/{clause.points:g} poin): {plain(clause.text)}" in out, (
                name,
                fn,
                out,
            )
        assert "[lolos]" not in out and f"{fn} belum ditulis" in out, out
        error = next(o for o in c.outputs if o.output_type == "error")
        assert f"{fn}: ketentuan " in error.evalue and "belum terpenuhi" in error.evalue
        assert error.traceback == [f"PublicCheckFailed: {error.evalue}"], "no traceback into public_checks"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_pictures_say_what_to_write_first(executed_release, name):
    """With the stubs, every picture cell prints which function to write instead of failing."""
    cells = [
        c for c in executed_release[name].cells if c.cell_type == "code" and "show_figure(_draw" in c.source
    ]
    assert cells, f"{name}: no picture cells"
    for c in cells:
        text = "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        assert not [o for o in c.outputs if o.output_type == "error"], f"{name} {gid(c)} fails with the stubs"
        assert "Gambar ini dibuat dari fungsi Anda" in text and "Tulis fungsi itu dulu" in text, (
            f"{name} {gid(c)}: no message saying what to write first; printed {text!r}"
        )


# =============================================================================================
# 5. Committed notebooks carry no outputs
# =============================================================================================
@pytest.mark.parametrize("folder", [SOURCE, RELEASE], ids=["source", "release"])
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebooks_have_no_outputs(folder, name):
    nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    dirty = [
        gid(c) or index
        for index, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.outputs or c.execution_count is not None)
    ]
    assert dirty == [], f"{folder.name}/{name}.ipynb: cells with outputs or execution counts: {dirty}"


# =============================================================================================
# 6. Scoring metadata: one solution and one test cell per graded function, the points table
# =============================================================================================
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_graded_functions_have_one_solution_and_one_test_cell(name, reference):
    suite = load_suite(GRADERS)
    for nb in (source_nb(name), release_nb(name)):
        ids = [gid(c) for c in nb.cells if gid(c)]
        assert len(ids) == len(set(ids)), f"{name}: duplicate grade_ids"
        functions = solution_functions(nb)
        assert functions == suite.notebooks[name], f"{name}: solution cells {functions} vs graders"
        for fn in functions:
            tests = [c for c in nb.cells if c.cell_type == "code" and gid(c) == f"test_{fn}"]
            solutions = [c for c in nb.cells if c.cell_type == "code" and gid(c) == f"solution_{fn}"]
            assert len(tests) == 1 and len(solutions) == 1, (
                f"{name} {fn}: {len(tests)} tests, {len(solutions)} solutions"
            )
            test_meta, solution_meta = meta(tests[0]), meta(solutions[0])
            assert test_meta.get("grade") and test_meta.get("locked") and not test_meta.get("solution")
            assert solution_meta.get("solution") and not solution_meta.get("grade")
            assert test_meta.get("points") == suite.max_score(reference, fn), (
                f"{name} test_{fn}: {test_meta.get('points')} points, its clauses add up to {suite.max_score(reference, fn)}"
            )


def written_answers(nb) -> list:
    return [
        c for c in nb.cells if c.cell_type == "markdown" and meta(c).get("grade") and meta(c).get("solution")
    ]


def test_written_answers_are_manually_graded():
    answers = [c for name in NOTEBOOKS for c in written_answers(release_nb(name))]
    assert len(answers) >= 2
    for c in answers:
        assert meta(c).get("points", 0) > 0 and gid(c).startswith("answer_") and not meta(c).get("locked")


def test_the_release_carries_the_points_of_the_source():
    """Every graded cell keeps its points through generate_assignment; every notebook has some."""
    assert graded_cells(RELEASE) == graded_cells(SOURCE)
    assert list(notebook_points(SOURCE)) == list(NOTEBOOKS)
    assert all(points > 0 for points in notebook_points(SOURCE).values())


def test_readme_points_table_is_generated_from_the_notebooks():
    assert readme_points_table(REPO / "docs" / "notebooks.md") == points_table(SOURCE), (
        "the points table of docs/notebooks.md is stale: run `python -m pe_course.build.points_table --write`"
    )


# =============================================================================================
# 7. Student-facing text is Indonesian
# =============================================================================================
INDONESIAN = {
    "yang",
    "dan",
    "posisi",
    "harus",
    "salah",
    "seharusnya",
    "diharapkan",
    "bentuk",
    "untuk",
    "nilai",
    "dengan",
    "tidak",
    "bila",
    "jika",
    "didapat",
    "sama",
    "bukan",
    "hasil",
    "tiap",
    "boleh",
    "baris",
}
ENGLISH = {"the", "should", "must", "expected", "wrong", "got", "instead", "received", "returns", "incorrect"}


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_markdown_is_indonesian_with_hints(name):
    markdown = "\n".join(c.source for c in release_nb(name).cells if c.cell_type == "markdown")
    assert {"yang", "dan", "posisi"} <= words(markdown), f"{name}: markdown lacks common Indonesian words"
    details = re.findall(r"<details>(.*?)</details>", markdown, flags=re.S)
    assert details, f"{name}: no <details> hint blocks"
    for block in details:
        assert re.match(r"\s*<summary>Petunjuk \d+</summary>", block), (
            f"{name}: hint without 'Petunjuk': {block[:60]!r}"
        )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_test_cell_runs_the_public_check_of_its_function(name):
    for c in release_nb(name).cells:
        if c.cell_type == "code" and gid(c).startswith("test_"):
            fn = gid(c).removeprefix("test_")
            assert c.source == f'from public_checks import check_function\n\ncheck_function("{fn}", {fn})', (
                c.source
            )


def test_the_public_checks_speak_indonesian(suite, reference):
    """What the public check prints (the same words as the feedback) for a stub and a misconception."""
    import contextlib
    import io
    import sys

    from pe_course.public_checks import check_function

    def stub(*args, **kwargs):
        raise NotImplementedError()

    outputs = []
    for fn in FUNCTIONS:
        for implementation in [stub, *[m.implementation for m in suite.misconceptions.get(fn, [])]]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out), pytest.raises(AssertionError) as raised:
                sys.modules["pe_course.public_checks"].HERE = RELEASE / "public_checks"
                check_function(fn, implementation, RELEASE / "public_checks")
            outputs.append(out.getvalue() + str(raised.value))
    for text in outputs:
        found = words(text)
        assert found & INDONESIAN and not found & ENGLISH, text


def test_the_public_checks_ship_no_hidden_case_and_no_reference_code(suite, reference):
    """public_checks/ holds the engine, the properties and, per notebook, only the public cases."""
    import json

    from pe_course.build.public_files import engine_files
    from pe_course.public_checks import from_data

    folder = RELEASE / "public_checks"
    assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == sorted(
        [*engine_files(), "properties.py", *(f"{n}.json" for n in NOTEBOOKS)]
    )
    assert all((folder / name).read_bytes() == data for name, data in engine_files().items())
    assert (folder / "properties.py").read_bytes() == (GRADERS / "_shared" / "properties.py").read_bytes()
    cases = suite.cases
    for name in NOTEBOOKS:
        data = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        for fn, spec in data["functions"].items():
            public = {c.name: c for c in cases(fn) if c.public}
            assert [c["name"] for c in spec["cases"]] == list(public), (
                f"{fn}: only the public cases, in order"
            )
            for shipped in spec["cases"]:
                want = public[shipped["name"]]
                got = [from_data(a) for a in shipped["args"]]
                assert all(np.array_equal(a, b) for a, b in zip(got, want.args, strict=True))
    shipped_defs = {
        node.name
        for node in ast.walk(ast.parse((folder / "properties.py").read_text()))
        if isinstance(node, ast.FunctionDef)
    }
    assert not shipped_defs & set(FUNCTIONS), "a property named like a graded function"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_released_text_speaks_in_one_register(name):
    """Students are addressed as "Anda" everywhere; the calque "Semua cek terlihat" and decimal commas are gone."""
    import re

    text = "\n".join(c.source for c in release_nb(name).cells)
    assert not re.search(r"\bkamu\b|\b\w+mu\b(?<!\bilmu)", text, flags=re.IGNORECASE), (
        "another register than 'Anda'"
    )
    assert "cek terlihat" not in text
    prose = "\n".join(c.source for c in release_nb(name).cells if c.cell_type == "markdown")
    assert not re.search(r"\b\d+,\d+\b", re.sub(r"`[^`]*`|\$[^$]*\$", "", prose)), (
        "decimal comma in the prose"
    )


def banned_phrases() -> list[str]:
    """The glossary's list of phrases that never appear in a released notebook (docs/glossary.md)."""
    text = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("<!-- banned:start -->", 1)[1].split("<!-- banned:end -->", 1)[0]
    return [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]


def test_the_glossary_bans_something():
    assert {"kamu", "penempelan", "cek terlihat"} <= set(banned_phrases())


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_released_text_follows_the_glossary(name):
    text = "\n".join(c.source for c in release_nb(name).cells).lower()
    found = [phrase for phrase in banned_phrases() if re.search(rf"\b{re.escape(phrase.lower())}\b", text)]
    assert not found, f"{name}: {found} (see docs/glossary.md for the term to use)"


def english_terms() -> list[str]:
    """The glossary's English terms that are italic and glossed at their first use (docs/glossary.md)."""
    text = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("<!-- english:start -->", 1)[1].split("<!-- english:end -->", 1)[0]
    return [line[2:].split(":", 1)[0].strip() for line in block.splitlines() if line.startswith("- ")]


def prose(nb) -> str:
    """A notebook's markdown with code, math and rubrics blanked out (offsets kept)."""
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    blank = lambda m: " " * len(m.group())  # noqa: E731
    text = re.sub(r"<!-- BEGIN MARK SCHEME -->.*?<!-- END MARK SCHEME -->", blank, text, flags=re.S)
    text = re.sub(r"```.*?```", blank, text, flags=re.S)
    return re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$|`[^`\n]*`", blank, text, flags=re.S)


def unglossed_terms(text: str) -> list[str]:
    """Terms whose first use in ``text`` is not inside an italic span followed by a parenthesised gloss."""
    italic = list(re.finditer(r"(?<![*\w])\*(?!\*)([^*\n]+?)\*(?!\*)", text))
    wrong = []
    for term in english_terms():
        first = re.search(rf"\b{re.escape(term)}\b", text, flags=re.IGNORECASE)
        if first is None:
            continue
        span = next((m for m in italic if m.start() < first.start() < m.end()), None)
        if span is None or not text[span.end() :].lstrip(" ").startswith("("):
            wrong.append(f"{term}: {text[max(0, first.start() - 40) : first.end() + 40]!r}")
    return wrong


def test_the_glossary_lists_english_terms():
    assert {"broadcasting", "mask", "offset", "loss", "heatmap", "readout", "prompt"} <= set(english_terms())


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_english_terms_are_italic_and_glossed_at_first_use(name):
    wrong = unglossed_terms(prose(release_nb(name)))
    assert not wrong, f"{name}: first use not italic and glossed (docs/glossary.md, English terms): {wrong}"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Nilai loss turun. Kemudian *loss* (besaran yang diminimalkan) ...", ["loss"]),
        ("Dengan *broadcasting* NumPy memperluas sumbu.", ["broadcasting"]),
        ("Attention tanpa *causal mask* (penutup skor) ...; *heatmap* (peta warna).", []),
    ],
)
def test_unglossed_terms_can_fail(text, found):
    assert [w.split(":")[0] for w in unglossed_terms(text)] == found


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_states_its_time_and_ends_with_a_summary(name):
    cells = release_nb(name).cells
    assert re.search(r"\*\*Perkiraan waktu:\*\*[^\n]*?sekitar \d+ menit", cells[0].source), (
        f"{name}: no estimated time"
    )
    assert cells[-1].cell_type == "markdown" and cells[-1].source.startswith("## Ringkasan"), (
        f"{name}: the last cell is not the Ringkasan"
    )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_optional_sections_come_after_everything_graded(name):
    """A 'Pendalaman' section says that it is not graded, and no graded or answer cell follows it."""
    cells = release_nb(name).cells
    headings = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and re.search(r"^#+ .*Pendalaman", c.source, flags=re.M)
    ]
    for i in headings:
        assert "(tidak dinilai)" in cells[i].source or any(
            "(tidak dinilai)" in cells[j].source for j in headings if j < i
        ), f"{name}: a Pendalaman section does not say it is not graded"
    if headings:
        graded = [gid(c) for c in cells[headings[0] :] if meta(c).get("grade") or meta(c).get("solution")]
        assert graded == [], f"{name}: graded cells inside the optional part: {graded}"


# =============================================================================================
# 8. No working code for a graded function outside its own solution cell
# =============================================================================================
# Inputs on which a helper that computes a graded function would agree with the reference: the
# visible-check arguments above plus one larger case each (d >= 4, so that e.g. the rotate-half layout
# of RoPE, which equals the interleaved one for d = 2, is not mistaken for apply_rope).
PROBES = {name: [call] for name, call in CALLS.items()}
PROBES["frequencies"].append(lambda: (12,))
PROBES["positional_encoding"].append(lambda: (9, 12))
PROBES["apply_rope"].append(lambda: (np.arange(24.0).reshape(4, 6) / 7,))
PROBES["rope_scores"].append(lambda: (np.arange(12.0).reshape(3, 4) / 5, np.arange(8.0).reshape(2, 4) / 3))
PROBES["shift_encoding"].append(lambda: (np.arange(8.0) / 9, 3))
PROBES["position_similarity"].append(lambda: (np.arange(1.0, 13.0).reshape(4, 3), 2))
PROBES["self_attention"].append(lambda: (np.arange(12.0).reshape(4, 3) / 6,))
PROBES["embed_backward"].append(lambda: ([1, 1, 0], np.arange(6.0).reshape(3, 2), 2, 5))


def _agrees(candidate, reference_fn, args) -> bool:
    """candidate(*args) gives the reference's result, or (for a table) its row t from candidate(t, *rest)."""
    expected = reference_fn(*args)
    try:
        with np.errstate(all="ignore"):
            got = candidate(*args)
        if isinstance(expected, tuple):
            return (
                isinstance(got, tuple)
                and len(got) == len(expected)
                and all(
                    np.shape(g) == np.shape(e) and np.allclose(g, e)
                    for g, e in zip(got, expected, strict=True)
                )
            )
        if np.shape(got) == np.shape(expected) and np.allclose(got, expected):
            return True
    except Exception:  # noqa: BLE001 (a helper with another signature simply does not agree)
        pass
    if isinstance(expected, tuple):
        return False
    table = np.asarray(expected)
    if table.ndim != 2 or not isinstance(args[0], int):
        return False
    try:  # a row-by-row implementation, such as sinusoidal_row(p, d) for positional_encoding(length, d)
        with np.errstate(all="ignore"):
            rows = [np.asarray(candidate(t, *args[1:]), dtype=float) for t in range(args[0])]
    except Exception:  # noqa: BLE001
        return False
    return all(r.shape == table.shape[1:] for r in rows) and np.allclose(rows, table)


def helper_functions(nb, name: str) -> dict:
    """Every function a code cell of ``nb`` defines outside the solution cells, at any depth, ready to call.

    Each cell's ``def`` statements are compiled on their own (the rest of a demo cell would call the
    student's stubs), in a namespace holding the notebook's setup cells.
    """
    namespace: dict = {"__name__": f"helpers_{name}"}
    with working_directory(RELEASE):  # setup cells load the data beside the notebook (pe_tables.npz)
        for c in nb.cells:
            if c.cell_type == "code" and "setup" in c.get("metadata", {}).get("tags", []):
                exec(compile(_plain(c.source), f"<{name} {gid(c)}>", "exec"), namespace)  # noqa: S102 (our release)
    found = {}
    for c in nb.cells:
        if c.cell_type != "code" or meta(c).get("solution"):
            continue
        tree = ast.parse(_plain(c.source))
        defs = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
        for node in defs:
            scope = dict(namespace)
            module = ast.Module(body=[node], type_ignores=[])
            try:
                exec(compile(module, f"<{name} {gid(c)} {node.name}>", "exec"), scope)  # noqa: S102 (our release)
            except Exception:  # noqa: BLE001 (a nested def that needs its enclosing scope: checked by name only)
                found[(gid(c) or "?", node.name)] = None
                continue
            found[(gid(c) or "?", node.name)] = scope[node.name]
    return found


def graded_code_leaks(nb, name: str, reference) -> list[str]:
    """Helpers in ``nb`` that are named like a graded function or compute one on the probe inputs."""
    leaks = []
    for (cell_id, fn_name), fn in helper_functions(nb, name).items():
        for graded in FUNCTIONS:
            alias = fn_name.strip("_").lower() == graded or fn_name.lower().startswith(graded + "_")
            agrees = fn is not None and all(
                _agrees(fn, reference[graded], probe()) for probe in PROBES[graded]
            )
            if alias or agrees:
                how = "computes" if agrees else "is named like"
                leaks.append(f"{name} {cell_id}: {fn_name} {how} the graded {graded}")
    return leaks


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_hands_over_no_graded_function(name, reference):
    leaks = graded_code_leaks(release_nb(name), name, reference)
    assert leaks == [], "working code for a graded function outside its solution cell:\n- " + "\n- ".join(
        leaks
    )


LEAKY_HELPERS = {
    "row_loop": (
        "def sinusoidal_row(p, d, base=10000.0):\n    row = []\n    for i in range(d // 2):\n"
        "        w = base ** (-2 * i / d)\n        row += [np.sin(p * w), np.cos(p * w)]\n    return row\n"
    ),
    "renamed_table": (
        "def table(n, d):\n    a = np.arange(n)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)\n"
        "    out = np.zeros((n, d))\n    out[:, 0::2], out[:, 1::2] = np.sin(a), np.cos(a)\n    return out\n"
    ),
    "nested_softmax": (
        "def _experiment():\n    def attend(x):\n        s = x @ x.T / np.sqrt(x.shape[1])\n"
        "        w = np.exp(s - s.max(axis=1, keepdims=True))\n        return (w / w.sum(axis=1, keepdims=True)) @ x\n"
        "    return attend\n"
    ),
    "alias_only": "def _one_hot(ids, v):\n    raise RuntimeError('belum')\n",
    # what 03 and 04 once provided from 02, before they loaded pe_tables.npz instead
    "provided_from_02": "def _frequencies(d_model, base=10000.0):\n    return base ** (-np.arange(0, d_model, 2) / d_model)\n",
}


@pytest.mark.parametrize("helper", sorted(LEAKY_HELPERS))
def test_graded_code_leak_check_can_fail(reference, helper):
    """A demo cell of 01 that hands over 02's table (by loop, under another name) or 04's attention is found."""
    nb = release_nb("01_embedding")
    demo = next(c for c in nb.cells if gid(c) == "demo_lookup")
    demo.source = LEAKY_HELPERS[helper] + "\n" + demo.source
    leaks = graded_code_leaks(nb, "01_embedding", reference)
    assert len(leaks) == 1 and "demo_lookup" in leaks[0], leaks


# -- public_checks/ ships code too: the engine and the properties -----------------------------
def shipped_functions(folder: Path) -> dict[str, object]:
    """Every module-level function of every module shipped in ``folder`` (the engine and
    properties.py), loaded from the shipped files as the package the notebooks import."""
    import importlib
    import importlib.util
    import inspect
    import sys

    package = f"shipped_public_checks_{abs(hash(str(folder)))}"
    spec = importlib.util.spec_from_file_location(
        package, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    sys.modules[package] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(sys.modules[package])
        modules = [sys.modules[package]]
        modules += [importlib.import_module(f"{package}.{p.stem}") for p in sorted(folder.glob("[!_]*.py"))]
        return {
            f"{module.__name__.removeprefix(package + '.')}.{name}": fn
            for module in modules
            for name, fn in inspect.getmembers(module, inspect.isfunction)
            if fn.__module__ == module.__name__
        }
    finally:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


def shipped_function_leaks(folder: Path, reference) -> list[str]:
    """Shipped functions that, called on the probe inputs, give a graded function's result."""
    import contextlib
    import io

    leaks = []
    for name, fn in shipped_functions(folder).items():
        for graded in FUNCTIONS:
            with contextlib.redirect_stdout(io.StringIO()):
                if all(_agrees(fn, reference[graded], probe()) for probe in PROBES[graded]):
                    leaks.append(f"public_checks/{name} computes the graded {graded}")
    return leaks


def test_public_checks_hand_over_no_graded_function(reference):
    """No function shipped in public_checks/, called on the probe inputs, gives a graded result."""
    found = shipped_functions(RELEASE / "public_checks")
    assert "properties.frequencies_geometric" in found and "runner.check_function" in found
    leaks = shipped_function_leaks(RELEASE / "public_checks", reference)
    assert leaks == [], "\n- ".join(["working code for a graded function in public_checks/:", *leaks])


def test_public_checks_leak_check_can_fail(reference, tmp_path):
    """A helper computing frequencies, added to a shipped engine module, is found."""
    folder = tmp_path / "public_checks"
    shutil.copytree(RELEASE / "public_checks", folder)
    with (folder / "compare.py").open("a", encoding="utf-8") as out:
        out.write("\n\n" + LEAKY_HELPERS["provided_from_02"])
    leaks = shipped_function_leaks(folder, reference)
    assert leaks == ["public_checks/compare._frequencies computes the graded frequencies"], leaks


def public_property_runs(folder: Path) -> list[tuple[str, tuple]]:
    """(property, arguments) of every property run of the public checks in ``folder``."""
    import json

    from pe_course.public_checks import from_data

    return [
        (entry["property"], tuple(from_data(a) for a in entry["args"]))
        for name in NOTEBOOKS
        for spec in json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))["functions"].values()
        for entry in spec["properties"]
    ]


def test_public_properties_compute_no_answer(reference):
    """Each shipped property, run on its public inputs with the reference in the student's place,
    computes from its inputs alone nothing that gives away a graded answer (tests/shipped_properties.py)."""
    from shipped_properties import property_leaks

    folder = RELEASE / "public_checks"
    source = (folder / "properties.py").read_text(encoding="utf-8")
    runs = public_property_runs(folder)
    defined = {
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }
    assert {name for name, _ in runs} == defined, "every shipped property runs on public inputs"
    leaks = property_leaks(source, runs, reference)
    assert leaks == [], "\n- ".join(["a shipped property computes a graded answer:", *leaks])


# What properties.py shipped before issue 29 (item 4), with the inputs its public checks gave them.
_PE_8 = np.array(
    [[np.sin(p * w), np.cos(p * w)] for p in range(20) for w in 10000.0 ** (-np.arange(0, 8, 2) / 8)]
).reshape(20, 8)
LEAKY_PROPERTIES = {
    "frequencies_geometric": (
        "def frequencies_geometric(c, d_model):\n"
        "    omega = c.array(c.call('frequencies', d_model), (d_model // 2,), 'omega')\n"
        "    c.close(omega[1:] / omega[:-1], np.full(d_model // 2 - 1, 10000.0 ** (-2.0 / d_model)), 'rasio')\n",
        (10,),
    ),
    "pe_dot_depends_on_offset": (
        "def pe_dot_depends_on_offset(c, length, d_model):\n"
        "    pe = c.array(c.call('positional_encoding', length, d_model), (length, d_model), 'pe')\n"
        "    p = np.arange(length)\n"
        "    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)\n"
        "    c.close(pe @ pe.T, np.cos((p[:, None] - p[None, :])[..., None] * omega).sum(axis=-1), 'gram')\n",
        (8, 6),
    ),
    "backward_sums_repeated_ids": (
        "def backward_sums_repeated_ids(c, ids, grad_h, vocab_size, block_size):\n"
        "    grad_tok, _ = c.call('embed_backward', ids, grad_h, vocab_size, block_size)\n"
        "    for v in sorted(set(ids.tolist())):\n"
        "        c.close(grad_tok[v], grad_h[ids == v].sum(axis=0), f'grad_tok[{v}]')\n",
        (np.array([1, 1, 0, 1]), np.arange(8.0).reshape(4, 2), 2, 5),
    ),
    "offset_equals_pe_dot": (
        "def offset_equals_pe_dot(c, pe, offsets):\n"
        "    for k in offsets:\n"
        "        value = c.call('offset_similarity', int(k), pe.shape[1])\n"
        "        c.close(value, float(pe[0] @ pe[k]), 'PE(0)·PE(k)')\n",
        (_PE_8, [1, 3]),
    ),
    "scores_constant_along_diagonals": (
        "def scores_constant_along_diagonals(c, v, w, length):\n"
        "    scores = c.call('rope_scores', np.tile(v, (length, 1)), np.tile(w, (length, 1)))\n"
        "    c.close(scores[0, 0], float(v @ w), 'S[0, 0]')\n",
        (np.array([1.0, 2.0, 0.5, -1.0]), np.array([0.5, 1.0, 1.0, 1.0]), 4),
    ),
}


@pytest.mark.parametrize("name", sorted(LEAKY_PROPERTIES))
def test_property_leak_check_can_fail(reference, name):
    """The properties that once computed frequencies, the core of offset_similarity, grad_tok, a PE dot
    product or a RoPE score are found (each replacing the shipped property of its name)."""
    from shipped_properties import property_leaks

    code, args = LEAKY_PROPERTIES[name]
    source = (RELEASE / "public_checks" / "properties.py").read_text(encoding="utf-8") + "\n\n" + code
    leaks = property_leaks(source, [(name, args)], reference)
    assert leaks and all(leak.startswith(f"{name}: computes ") for leak in leaks), leaks

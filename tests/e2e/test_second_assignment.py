"""A second assignment beside positional-encoding, in one course directory (issue 20's proof).

The toy assignment of ``tests/fixtures/course/`` (``source/toy-attention/01_attention.ipynb`` and
``graders/toy-attention/``: two graded functions, one of them ``self_attention``, named like one of
positional-encoding's but with other arguments, clauses and points) is copied into a disposable copy
of the course and goes the whole way there: ``pe-course build`` and ``release --check``, one Canvas
download holding both assignments' files taken in by ``nbgrader zip_collect`` per assignment,
``pe-course grade`` locally and on a Dask cluster, feedback pages, ``pytest graders --assignment``
and ``pe-course report`` — with positional-encoding graded in the same directory. Real nbgrader,
kernels, sandbox and Dask processes throughout.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import CourseCopy, pe_course, reference_nb, requires_bwrap, with_code
from lms_fixtures import CLASS, canvas_gradebook

from pe_course.build.points_table import graded_cells
from pe_course.build.self_validation import reference_submission
from pe_course.course import Course
from pe_course.course.notebooks import load_reference
from pe_course.engine.discovery import load_suite
from pe_course.lms.intake import canvas_name, lms_zip
from pe_course.lms.names import canvas_key

pytestmark = requires_bwrap  # slow: tests/conftest.py's SLOW_MODULES

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "course"
TOY, PE = "toy-attention", "positional-encoding"
NOTEBOOK = "01_attention"

# Çağla builds her result with np.zeros_like(v): int when v is int (the toy's K2 of self_attention).
INT_OUTPUT = """def self_attention(q, k, v):
    s = attention_scores(q, k)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    out = np.zeros_like(v, shape=(s.shape[0], np.shape(v)[1]))
    out[:] = w / w.sum(axis=1, keepdims=True) @ v
    return out"""
# Siti forgets the scale (the misconception unscaled-scores): only attention_scores may lose points.
UNSCALED = """def attention_scores(q, k):
    return np.asarray(q, dtype=float) @ np.asarray(k, dtype=float).T"""

ANI, CAGLA, SITI = CLASS[0], CLASS[1], CLASS[2]
TOY_STUDENTS = [ANI.npm, CAGLA.npm, SITI.npm]


def _toy_nb(function: str | None = None, code: str = ""):
    nb = reference_submission(FIXTURE / "source" / TOY / f"{NOTEBOOK}.ipynb")
    return with_code(nb, function, code) if function else nb


def _canvas_download(path: Path) -> Path:
    """One Canvas download holding both assignments' files: Ani's toy notebook and positional-encoding's
    04_similarity, Çağla's and Siti's toy notebooks (Siti's re-uploaded as "01_attention (1).ipynb")."""
    uploads = [
        (ANI, f"{NOTEBOOK}.ipynb", _toy_nb()),
        (ANI, "04_similarity.ipynb", reference_nb("04_similarity")),
        (CAGLA, f"{NOTEBOOK}.ipynb", _toy_nb("self_attention", INT_OUTPUT)),
        (SITI, f"{NOTEBOOK} (1).ipynb", _toy_nb("attention_scores", UNSCALED)),
    ]
    files = {
        canvas_name(canvas_key(s.sortable_name), s.canvas_id, s.canvas_id * 10 + i, name): nbformat.writes(
            nb
        ).encode()
        for i, (s, name, nb) in enumerate(uploads)
    }
    return lms_zip(path, files, streamed=True, when=(2026, 12, 2, 8, 0, 0))


def _pages(root: Path, assignment: str) -> dict[str, str]:
    """Every feedback file of the assignment, by student/notebook."""
    return {
        f"{p.parts[-3]}/{p.name}": p.read_text(encoding="utf-8")
        for p in sorted((root / "feedback").glob(f"*/{assignment}/*"))
        if p.is_file()
    }


def _records(root: Path, assignment: str) -> dict[str, dict]:
    """Every grading record of the assignment without the run's own timings and resource figures."""
    return {
        p.parts[-3]: {
            k: v
            for k, v in json.loads(p.read_text(encoding="utf-8")).items()
            if k not in ("seconds", "resources")
        }
        for p in sorted((root / "autograded").glob(f"*/{assignment}/*.grading.json"))
    }


class TwoAssignments(CourseCopy):
    """The course copy holding positional-encoding and the toy assignment, and what its round printed."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, PE)
        self.toy = Course(root, TOY)
        self.out: dict[str, subprocess.CompletedProcess] = {}
        self.local: dict[str, object] = {}  # the toy's results of the local round


@pytest.fixture(scope="module")
def course(_course_template, tmp_path_factory) -> TwoAssignments:
    """Release, intake and a local round of both assignments, in one disposable course directory."""
    root = tmp_path_factory.mktemp("two-assignments") / "course"
    shutil.copytree(_course_template, root)
    for folder in ("source", "graders"):
        shutil.copytree(FIXTURE / folder / TOY, root / folder / TOY)
    two = TwoAssignments(root)
    two.out["build"] = pe_course(root, "build", TOY)
    two.out["check"] = pe_course(root, "release", "--check", TOY)
    download = _canvas_download(root / "downloaded" / TOY / "archive" / "canvas.zip")
    (root / "downloaded" / PE / "archive").mkdir(parents=True)
    shutil.copy(download, root / "downloaded" / PE / "archive" / "canvas.zip")
    roster = canvas_gradebook(root / "canvas-export.csv")
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.LmsFileNameCollector.rosters = [{roster.name!r}]\n")
    for assignment in (TOY, PE):
        two.out[f"intake {assignment}"] = two.nbgrader("zip_collect", assignment, check=True)
    two.out["grade"] = pe_course(root, "grade")
    for assignment in (TOY, PE):
        two.out[f"grade {assignment}"] = pe_course(root, "grade", assignment)
    two.local = {
        "scores": two.scores(TOY),
        "records": _records(root, TOY),
        "pages": _pages(root, TOY),
    }
    return two


def test_the_toy_is_built_and_released_beside_positional_encoding(course):
    build, check = course.out["build"], course.out["check"]
    assert build.returncode == 0 and "Self-validation passed" in build.stdout, build.stdout
    assert check.returncode == 0 and "release/ matches" in check.stdout, check.stdout + check.stderr
    release = course.root / "release" / TOY
    assert sorted(p.name for p in release.glob("*.ipynb")) == [f"{NOTEBOOK}.ipynb"]
    shipped = json.loads((release / "public_checks" / f"{NOTEBOOK}.json").read_text(encoding="utf-8"))
    suite = load_suite(course.toy.graders)
    assert list(shipped["functions"]) == suite.notebooks[NOTEBOOK] == ["attention_scores", "self_attention"]
    for fn, spec in shipped["functions"].items():
        public = [c.name for c in suite.cases(fn) if c.public]
        assert [c["name"] for c in spec["cases"]] == public, f"{fn}: only the public cases ship"
    text = "\n".join(c.source for c in nbformat.read(release / f"{NOTEBOOK}.ipynb", as_version=4).cells)
    assert "BEGIN SOLUTION" not in text and "Rubrik penilaian" not in text
    assert "raise NotImplementedError" in text
    # positional-encoding's release is untouched by the second assignment
    assert pe_course(course.root, "release", "--check", PE).returncode == 0


def test_one_download_holding_both_assignments_fills_each_with_its_own_notebooks(course):
    submitted = sorted(
        str(p.relative_to(course.root / "submitted")) for p in course.course.submitted.rglob("*.ipynb")
    )
    assert submitted == sorted(
        [
            f"{ANI.npm}/{PE}/04_similarity.ipynb",
            *(f"{sid}/{TOY}/{NOTEBOOK}.ipynb" for sid in TOY_STUDENTS),
        ]
    )
    pe_intake = course.out[f"intake {PE}"]
    skipped = [line for line in pe_intake.stderr.splitlines() if NOTEBOOK in line and "Skipping" in line]
    assert len(skipped) == 3 and all("not one of the assignment's notebooks" in line for line in skipped)
    toy_intake = course.out[f"intake {TOY}"]
    skipped = [line for line in toy_intake.stderr.splitlines() if "Skipping" in line]
    assert len(skipped) == 1 and "04_similarity.ipynb" in skipped[0]
    identities = json.loads((course.root / ".pe-course" / "lms-identities.json").read_text(encoding="utf-8"))
    assert sorted(identities[TOY]) == sorted(TOY_STUDENTS) and sorted(identities[PE]) == [ANI.npm]


def test_both_assignments_are_graded_in_the_same_course_each_by_its_own_graders(course):
    grade = course.out["grade"]
    lines = [line for line in (grade.stdout + grade.stderr).splitlines() if line.strip()]
    assert grade.returncode == 2 and lines == [f"Name the assignment: this course has '{PE}', '{TOY}'"]
    for assignment in (TOY, PE):
        out = course.out[f"grade {assignment}"]
        assert out.returncode == 0, out.stdout + out.stderr
    toy_points = {gid: pts for _, gid, written, pts in graded_cells(course.toy.source) if not written}
    clauses = load_reference(course.toy.source).contracts
    full = {(sid, NOTEBOOK, gid): pts for sid in TOY_STUDENTS for gid, pts in toy_points.items()}
    # Çağla loses K2 of self_attention, Siti K1 of attention_scores; nothing else (one mistake, one cell)
    full[(CAGLA.npm, NOTEBOOK, "test_self_attention")] -= clauses["self_attention"]["K2"].points
    full[(SITI.npm, NOTEBOOK, "test_attention_scores")] -= clauses["attention_scores"]["K1"].points
    scores = course.scores(TOY)
    assert {k: v for k, v in scores.items() if k[2].startswith("test_")} == full
    # Ani's positional-encoding notebook scores what it scores alone: every test cell in full
    pe_scores = course.scores(PE)
    pe_points = {
        (nb, gid): pts for nb, gid, written, pts in graded_cells(course.course.source) if not written
    }
    assert {
        k[1:]: v for k, v in pe_scores.items() if k[1] == "04_similarity" and k[2].startswith("test_")
    } == {k: v for k, v in pe_points.items() if k[0] == "04_similarity"}
    assert {k[0] for k in pe_scores} == {ANI.npm}
    # self_attention, two functions of one name: each graded by its own assignment's checks and points
    with course.course.gradebook() as gb:
        toy_max = gb.find_grade_cell("test_self_attention", NOTEBOOK, TOY).max_score
        pe_max = gb.find_grade_cell("test_self_attention", "04_similarity", PE).max_score
    assert (
        toy_max
        == toy_points["test_self_attention"]
        != pe_max
        == pe_points[("04_similarity", "test_self_attention")]
    )
    toy_cell = next(
        c for c in course.record(ANI.npm, NOTEBOOK, TOY)["cells"] if c["function"] == "self_attention"
    )
    pe_cell = next(
        c for c in course.record(ANI.npm, "04_similarity", PE)["cells"] if c["function"] == "self_attention"
    )
    toy_checks = [c.name for c in load_suite(course.toy.graders).checks["self_attention"]]
    pe_checks = [c.name for c in load_suite(course.course.graders).checks["self_attention"]]
    assert [c["name"] for c in toy_cell["checks"]] == toy_checks and toy_cell["max_score"] == toy_max
    assert [c["name"] for c in pe_cell["checks"]] == pe_checks and pe_cell["max_score"] == pe_max
    diagnosed = {
        sid: [m["id"] for c in r["cells"] for m in c["misconceptions"]]
        for sid, r in course.local["records"].items()
    }
    assert diagnosed == {ANI.npm: [], CAGLA.npm: [], SITI.npm: ["unscaled-scores"]}


def _text(page: str) -> str:
    """A feedback page's text as a student reads it (no styles, scripts or tags)."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_the_toy_feedback_says_what_is_wrong_and_on_which_input(course):
    pages = {key: _text(page) for key, page in course.local["pages"].items() if key.endswith(".html")}
    assert sorted(key.split("/")[0] for key in pages) == sorted(TOY_STUDENTS)
    contracts = load_reference(course.toy.source).contracts
    assert "❌" not in pages[f"{ANI.npm}/{NOTEBOOK}.html"]
    # Çağla: K2 lost, with the failing input, what was expected and what her function gave
    cagla = pages[f"{CAGLA.npm}/{NOTEBOOK}.html"]
    assert f"❌ K2 (0/{contracts['self_attention']['K2'].points:g} poin)" in cagla, cagla
    assert cagla.count("❌") == 1
    failing = re.search(
        r"salah untuk input self_attention\((.+?)\): .*?diharapkan (\S+), didapat (\S+)\.", cagla
    )
    assert failing, cagla
    args = eval(f"({failing.group(1)},)", {"np": np})  # the input as the page shows it
    assert all(np.asarray(a).dtype.kind == "i" for a in args), "an input of K2's class: int arrays"
    expected = load_reference(course.toy.source)["self_attention"](*args)
    assert expected.size == 1 and float(failing.group(2)) == pytest.approx(float(expected[0, 0]), abs=1e-4)
    assert float(failing.group(3)) != pytest.approx(float(failing.group(2)))
    # Siti: K1 of attention_scores, with the misconception's hint; self_attention in full
    siti = pages[f"{SITI.npm}/{NOTEBOOK}.html"]
    hint = next(m.hint for m in load_suite(course.toy.graders).misconceptions["attention_scores"])
    assert f"❌ K1 (0/{contracts['attention_scores']['K1'].points:g} poin)" in siti and siti.count("❌") == 1
    assert "salah untuk input attention_scores(" in siti and "unscaled-scores" in siti and hint in siti


def test_the_toy_is_graded_on_a_dask_cluster_as_locally(course, cluster):
    proc = pe_course(course.root, "grade", TOY, "--scheduler", cluster.address, "--force")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Sandbox on 2 worker(s)" in proc.stdout, proc.stdout
    assert course.scores(TOY) == course.local["scores"]
    assert _records(course.root, TOY) == course.local["records"]
    assert _pages(course.root, TOY) == course.local["pages"]


def test_pytest_graders_takes_the_assignment(course):
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "graders"]
    kw = {"cwd": course.root, "capture_output": True, "text": True, "timeout": 300, "check": False}
    checks = {
        assignment: sum(len(c) for c in load_suite(Course(course.root, assignment).graders).checks.values())
        for assignment in (PE, TOY)
    }
    toy = subprocess.run([*argv, "--assignment", TOY], **kw)
    assert toy.returncode == 0 and f"{checks[TOY]} passed" in toy.stdout, toy.stdout[-3000:] + toy.stderr
    both = subprocess.run([*argv, "-v"], **kw)  # every assignment's reference solutions, by name
    assert both.returncode == 0 and f"{sum(checks.values())} passed" in both.stdout, both.stdout[-3000:]
    assert f"[{TOY}/{NOTEBOOK}::test_self_attention::bobot-berjumlah-satu] PASSED" in both.stdout
    assert f"[{PE}/04_similarity::test_self_attention::ekuivarian-permutasi] PASSED" in both.stdout
    assert "[01_attention::" not in both.stdout, "two assignments: every test names its assignment"
    submission = course.root / "submitted" / CAGLA.npm / TOY / f"{NOTEBOOK}.ipynb"
    unnamed = subprocess.run([*argv, "--submission", str(submission)], **kw)
    assert unnamed.returncode == 4, unnamed.stdout + unnamed.stderr
    assert f"Name the assignment: this course has '{PE}', '{TOY}'" in unnamed.stderr
    named = subprocess.run([*argv, "-v", "--assignment", TOY, "--submission", str(submission)], **kw)
    failed = re.findall(r"\[(\S+)\] FAILED", named.stdout)  # Çağla's int inputs: her case and the int check
    assert named.returncode == 1 and failed == [
        f"{NOTEBOOK}::test_self_attention::kasus",
        f"{NOTEBOOK}::test_self_attention::bilangan-bulat",
    ], named.stdout[-3000:]


def test_each_assignment_has_its_feedback_zips_and_report_in_the_same_course(course):
    proc = pe_course(course.root, "feedback", TOY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    zips = course.root / "feedback-zips"
    assert sorted(p.name for p in (zips / TOY).glob("*.zip")) == sorted(f"{s}.zip" for s in TOY_STUDENTS)
    assert not (zips / PE).exists()
    for assignment in (TOY, PE):
        proc = pe_course(course.root, "report", assignment)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = course.root / "reports"
    rows = {
        assignment: {r["student_id"]: r for r in csv.DictReader((folder / assignment / "grades.csv").open())}
        for assignment in (TOY, PE)
    }
    scores = course.scores(TOY)
    for sid in TOY_STUDENTS:
        auto = sum(v for (s, _, _), v in scores.items() if s == sid)
        assert float(rows[TOY][sid]["raw_score"]) == pytest.approx(auto)
        assert rows[TOY][sid]["manual_grading_pending"] == "1"
    assert all(r["assignment"] == assignment for assignment, table in rows.items() for r in table.values())
    assert float(rows[PE][ANI.npm]["raw_score"]) == pytest.approx(sum(course.scores(PE).values()))
    report = (folder / TOY / "report.html").read_text(encoding="utf-8")
    assert "unscaled-scores" in report and "04_similarity" not in report

"""Regrades (issue 35): a regrade is a comparison an instructor can trust and explain.

The slow test is the acceptance: a class graded, one check of the graders changed in the course copy
(a second reading of one_hot's K3: an empty ``ids`` given as a Python list is no longer asked for), a dry
run that writes nothing, an interrupted regrade that leaves every student on one version, and the regrade
that lists exactly the student whose score changed, with the clause and the input, manual scores kept.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import pe_course, reference_nb, with_code
from lms_fixtures import canvas_gradebook, moodle_worksheet
from lms_importers import canvas_import_rows

from pe_course.course.versions import graders_version
from pe_course.lms.upload import export
from pe_course.record import CellResult, ClauseResult, GradingRecord
from pe_course.round.regrade import Cell, State, compare_student
from pe_course.round.regrade_report import RegradeReport
from pe_course.round.writer import _replace
from pe_course.steps.regrade_notice import notice_markdown

A = "positional-encoding"
ONE_HOT_BUG = "def one_hot(ids, vocab_size):\n    return np.eye(vocab_size)[np.array(ids)]\n"
EMBED_INDEX_ERROR = (
    "def embed(ids, tok_table, pos_table):\n"
    "    ids = np.asarray(ids, dtype=int)\n"
    "    return tok_table[ids] + pos_table[np.arange(len(ids))]\n"
)


# -- fast: the comparison, the report, the notice, the kept records, the version -------------------
def _record(passed: bool, version: str) -> GradingRecord:
    k3 = ClauseResult("K3", "ids boleh kosong", 0.25 if passed else 0.0, 0.25, passed,
                      "" if passed else "IndexError", "" if passed else "one_hot([], 4)",
                      checks=[] if passed else ["ids-kosong"])  # fmt: skip
    k1 = ClauseResult("K1", "baris one-hot", 0.5, 0.5, True)
    cell = CellResult("test_one_hot", "one_hot", 0.5 + k3.points, 0.75, clauses=[k1, k3])
    return GradingRecord("01_embedding", [cell], "bubblewrap", graders_version=version)


def _state(passed: bool, version: str, manual: float | None) -> State:
    auto = 0.75 if passed else 0.5
    cells = {
        ("01_embedding", "test_one_hot"): Cell(auto, None, None, 0.75, False),
        ("01_embedding", "answer_untrained_positions"): Cell(None, manual, None, 2.0, True),
    }
    return State(cells, {"01_embedding": _record(passed, version)})


def test_a_student_change_names_the_clause_input_verdicts_and_the_kept_manual_score():
    change = compare_student("budi", _state(False, "old", 1.5), _state(True, "new", 1.5))
    assert (change.old_score, change.new_score, change.score_changed) == (2.0, 2.25, True)
    assert change.notebooks == {"01_embedding": [2.0, 2.25]}
    [clause] = change.clauses  # K1 did not change: not listed
    assert (clause.function, clause.clause, clause.input, clause.checks) == (
        "one_hot",
        "K3",
        "one_hot([], 4)",
        ["ids-kosong"],
    )
    assert (clause.verdict(clause.old), clause.verdict(clause.new), clause.delta) == (
        "failed 0/0.25",
        "passed 0.25/0.25",
        0.25,
    )
    assert change.kept == [
        {
            "notebook": "01_embedding",
            "cell": "answer_untrained_positions",
            "manual": 1.5,
            "written": True,
            "auto_changed": False,
        }
    ]
    same = compare_student("ani", _state(True, "old", None), _state(True, "new", None))
    assert not same.score_changed and not same.clauses

    report = RegradeReport(A, "2026-12-04T10:00:00+00:00", "new", previous_versions=["old"])
    report.students, report.unchanged, report.kept = [change], ["ani", "citra"], {"budi": change.kept}
    report.before, report.after = [2.0, 3.0, 4.0], [2.25, 3.0, 4.0]
    text = "\n".join(report.lines())
    assert "1 students' scores changed; 0 changed in feedback only; 2 unchanged" in text
    assert "- budi: 2 -> 2.25" in text
    assert "one_hot K3 [ids-kosong]: failed 0/0.25 -> passed 0.25/0.25 on one_hot([], 4)" in text
    assert "Unchanged (2): ani, citra" in text
    assert "Manual scores kept (1): budi 01_embedding/answer_untrained_positions = 1.5" in text
    again = RegradeReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.lines() == report.lines()  # regrade.json is the report, read back whole

    notice = notice_markdown(change.for_notebook("01_embedding", report.date) or {})
    assert (
        "Nilai Anda untuk notebook ini berubah dari **2** menjadi **2.25** karena penilai otomatis" in notice
    )
    assert (
        "`one_hot`, ketentuan K3: sebelumnya tidak terpenuhi (0/0.25 poin, input `one_hot([], 4)`)" in notice
    )
    assert "sekarang terpenuhi (0.25/0.25 poin)" in notice
    assert "Nilai yang diberikan pengajar tetap berlaku: `answer_untrained_positions` (1.5 poin)" in notice
    assert change.for_notebook("02_sinusoidal", report.date) is None


def test_the_latest_regrade_is_every_round_of_the_latest_graders_version(tmp_path):
    from pe_course.course import Course
    from pe_course.round.regrade import history, latest_changed
    from pe_course.round.regrade_report import StudentChange

    course = Course(tmp_path, A)
    assert latest_changed(course) is None
    rounds = [
        ("20261201T000000Z", "v1", "eko"),
        ("20261202T000000Z", "v2", "budi"),
        ("20261202T010000Z", "v2", "dewi"),
    ]
    for stamp, version, student in rounds:  # v2 interrupted after budi, then resumed
        report = RegradeReport(A, stamp, version, students=[StudentChange(student, 1.0, 2.0)])
        folder = tmp_path / "regrades" / A / stamp
        folder.mkdir(parents=True)
        (folder / "regrade.json").write_text(json.dumps(report.to_dict()))
    (tmp_path / "regrades" / A / "20261203T000000Z").mkdir()  # a round that wrote no report: not one
    assert [r.graders_version for r in history(course)] == ["v1", "v2", "v2"]
    assert latest_changed(course) == ["budi", "dewi"]


def test_a_replaced_folder_keeps_its_records_and_is_never_half_of_each(tmp_path):
    parent, keep = tmp_path / "autograded" / "budi", tmp_path / "previous" / "budi"
    (parent / A).mkdir(parents=True)
    (parent / A / "01_embedding.grading.json").write_text("old record")
    (parent / A / "01_embedding.ipynb").write_text("old notebook")
    new = tmp_path / "staging" / A
    new.mkdir(parents=True)
    (new / "01_embedding.grading.json").write_text("new record")
    _replace(new, parent, keep)
    assert (parent / A / "01_embedding.grading.json").read_text() == "new record"
    assert (keep / "01_embedding.grading.json").read_text() == "old record"
    assert sorted(p.name for p in parent.iterdir()) == [A], "no .old folder left"


def test_the_graders_version_follows_graders_and_release_not_where_they_are(tmp_path):
    graders, release = tmp_path / "graders", tmp_path / "release"
    for folder in (graders, release):
        folder.mkdir()
        (folder / "a.py").write_text("x = 1\n")
    first = graders_version(graders, release)
    (graders / "__pycache__").mkdir()
    (graders / "__pycache__" / "a.pyc").write_bytes(b"compiled")
    assert graders_version(graders, release) == first, "caches are not the graders"
    elsewhere = tmp_path / "worker"
    shutil.copytree(graders, elsewhere / "graders")
    shutil.copytree(release, elsewhere / "release")
    assert graders_version(elsewhere / "graders", elsewhere / "release") == first  # as on a Dask worker
    (graders / "a.py").write_text("x = 2\n")
    assert graders_version(graders, release) != first
    (release / "a.py").write_text("y = 1\n")
    assert len({first, graders_version(graders, release)}) == 2


@pytest.mark.parametrize("lms", ["canvas", "moodle"])
def test_the_changed_only_export_sends_their_grades_and_pages_as_the_full_export_does(tmp_path, lms):
    import warnings

    from lms_fixtures import CLASS
    from sqlalchemy.exc import SAWarning
    from test_lms_refusals import _course

    course = _course(tmp_path, lms)
    with warnings.catch_warnings(), course.gradebook() as gb:
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own API
        for s in CLASS:
            gb.add_submission(A, s.npm)
    for s in CLASS:
        (course.feedback / s.npm / A).mkdir(parents=True)
        (course.feedback / s.npm / A / "01_embedding.html").write_text(f"<p>{s.npm}</p>")
    source = (canvas_gradebook if lms == "canvas" else moodle_worksheet)(tmp_path / "export.csv")
    full, _ = export(course, lms, source, tmp_path / "full")
    only = {CLASS[0].npm, CLASS[3].npm}
    changed, notes = export(course, lms, source, tmp_path / "changed", only=only)
    assert f"changed only: 2 student(s) the latest regrade changed ({', '.join(sorted(only))})" in notes
    assert not [n for n in notes if "not in nbgrader's gradebook" in n], "the others are no mistake here"
    if lms == "canvas":  # read as Canvas's importer reads it: header, points row, student rows
        header, points, students = canvas_import_rows(changed[0])
        assert (header, points) == canvas_import_rows(full[0])[:2]
        assert sorted(r[2] for r in students) == sorted(only)  # SIS User ID: only theirs
        assert all(r in canvas_import_rows(full[0])[2] for r in students), "as the full export writes them"
    else:  # read as Moodle's worksheet importer reads it: columns by name; the others as downloaded

        def rows(path: Path) -> dict[str, dict[str, str]]:
            text = path.read_bytes().decode("utf-8-sig")
            return {r["ID number"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}

        got, every, downloaded = rows(changed[0]), rows(full[0]), rows(source)
        assert all(got[sid] == every[sid] for sid in only)
        assert all(got[sid] == downloaded[sid] for sid in set(got) - only)
    with zipfile.ZipFile(changed[1]) as zf, zipfile.ZipFile(full[1]) as whole:
        assert len(whole.namelist()) == len(CLASS) and len(zf.namelist()) == 2
        assert set(zf.namelist()) <= set(whole.namelist())


# -- slow: the acceptance, on a real class, graders changed in the course copy ------------------------
def _change_one_check(root: Path) -> None:
    """A second reading of one_hot's K3: an empty ids given as a Python list is no longer asked for."""
    cases = root / "graders" / A / "01_embedding" / "cases" / "one_hot.json"
    cases.write_text(
        json.dumps([c for c in json.loads(cases.read_text()) if c["name"] != "ids kosong (list)"])
    )
    checks = root / "graders" / A / "01_embedding" / "checks.py"
    text = checks.read_text()
    lists = '    g.expect("one_hot", [], 4)\n    g.expect("one_hot", [], 9)\n'
    assert lists in text
    checks.write_text(text.replace(lists, ""))


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _versions(root: Path, student: str) -> set[str]:
    folder = root / "autograded" / student / A
    return {json.loads(p.read_text())["graders_version"] for p in folder.glob("*.grading.json")}


def test_a_regrade_lists_exactly_whose_score_changed_and_a_dry_run_writes_nothing(course_copy):
    from pe_course.round.grade import grade_round
    from pe_course.runners.local import LocalRunner

    root = course_copy.root
    nb = reference_nb("01_embedding")
    course_copy.submit("ani", {"01_embedding": nb})
    course_copy.submit("budi", {"01_embedding": with_code(nb, "one_hot", ONE_HOT_BUG)})
    course_copy.submit("citra", {"01_embedding": with_code(nb, "embed", EMBED_INDEX_ERROR)})
    first = pe_course(root, "grade", A)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Regrade" not in first.stdout, "a first grading is no regrade"
    old = {s: course_copy.record(s, "01_embedding")["score"] for s in ("ani", "budi", "citra")}
    [old_version] = _versions(root, "ani")
    with course_copy.course.gradebook() as gb:  # a grader's score in formgrader
        grade = gb.find_grade("answer_untrained_positions", "01_embedding", A, "ani")
        grade.manual_score = 1.5
        gb.db.commit()
    _change_one_check(root)

    before = _files(root)
    dry = pe_course(root, "grade", A, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert _files(root) == before, "a dry run writes nothing: gradebook and every file byte-identical"
    assert f"- budi: {old['budi']:g} -> {old['budi'] + 0.25:g}" in dry.stdout
    assert "one_hot K3 [ids-kosong, kasus]: failed 0/0.25 -> passed 0.25/0.25 on one_hot([], 4)" in dry.stdout
    assert "1 students' scores changed; 0 changed in feedback only; 2 unchanged" in dry.stdout
    assert "Manual scores kept (1): ani 01_embedding/answer_untrained_positions = 1.5" in dry.stdout

    merged: list[str] = []

    def stop_after_one(kind, student, summary):
        if kind == "graded":
            merged.append(student)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # Ctrl-C after the first student merged
        grade_round(course_copy.course, LocalRunner(1), on_event=stop_after_one, feedback=True)
    [done] = merged
    for student in ("ani", "budi", "citra"):  # each student on one version, records and gradebook alike
        [version] = _versions(root, student)
        assert (version != old_version) == (student == done)
    scores = course_copy.scores()
    assert scores[("ani", "01_embedding", "answer_untrained_positions")] == 1.5
    for student in ("ani", "budi", "citra"):  # the gradebook says what the student's records say
        record = course_copy.record(student, "01_embedding")
        for cell in record["cells"]:
            assert scores[(student, "01_embedding", cell["grade_id"])] == pytest.approx(cell["score"])

    regraded = pe_course(root, "grade", A)  # goes on: the others are regraded now
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr
    assert all(len(_versions(root, s) - {old_version}) == 1 for s in ("ani", "budi", "citra"))
    reports = [json.loads(p.read_text()) for p in sorted((root / "regrades" / A).glob("*/regrade.json"))]
    assert len(reports) == 2
    changed = [s for r in reports for s in r["students"]]
    assert [s["student"] for s in changed] == ["budi"], "exactly the student whose score changed"
    [clause] = changed[0]["clauses"]
    assert (clause["function"], clause["clause"], clause["input"]) == ("one_hot", "K3", "one_hot([], 4)")
    assert (changed[0]["new_score"] - changed[0]["old_score"]) == pytest.approx(0.25)
    assert sorted(s for r in reports for s in r["unchanged"]) == ["ani", "citra"]
    from pe_course.round.regrade import latest_changed

    assert latest_changed(course_copy.course) == ["budi"], "what export --changed-only sends"
    assert {k["manual"] for r in reports for k in r["kept"].get("ani", [])} == {1.5}
    assert course_copy.scores()[("ani", "01_embedding", "answer_untrained_positions")] == 1.5
    kept = sorted((root / "regrades" / A).glob("*/previous/*/01_embedding.grading.json"))
    assert sorted(p.parent.name for p in kept) == ["ani", "budi", "citra"]
    assert {json.loads(p.read_text())["graders_version"] for p in kept} == {old_version}
    page = (root / "feedback" / "budi" / A / "01_embedding.html").read_text(encoding="utf-8")
    assert "Nilai Anda untuk notebook ini berubah dari" in page and "ketentuan K3" in page
    assert "Perubahan penilaian" not in (root / "feedback" / "ani" / A / "01_embedding.html").read_text()

    report = pe_course(root, "report", A)
    assert report.returncode == 0 and "Regrades" in report.stdout, report.stdout + report.stderr

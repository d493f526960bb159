"""The instructor's grading report (``pe_course.report``) on a course graded by real nbgrader.

One autograde run for the module: three students submit 01 and 02 only (so 03 and 04 are missing
for everyone) — alice the reference solutions (her written answers need a manual grade), bob the
untouched stubs, carol only 02 with sin and cos swapped in ``positional_encoding`` (a catalogued
misconception) and no 01. The report is checked against nbgrader's gradebook (its API) and the
graders' catalogue (per clause: who lost it, against the gradebook's cell scores and the notebook's
clauses), a copy with hostile ids, notes and messages must come out escaped, and a version-3 record
(points per check) still shows up per clause.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
import statistics
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import TOTAL_POINTS, CourseCopy, reference_nb, release_nb, with_code
from nbgrader.api import Course as DbCourse
from nbgrader.api import Gradebook

from pe_course.course.clauses import parse_contracts
from pe_course.engine.discovery import load_suite
from pe_course.report import collect, write_report

pytestmark = pytest.mark.slow

ASSIGNMENT = "positional-encoding"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLOTS = 4  # total histogram, per-notebook histograms, test cells, clauses

SIN_COS_SWAPPED = """def positional_encoding(length, d_model, base=10000.0):
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model harus genap dan positif, didapat {d_model}")
    if length < 0:
        raise ValueError(f"length tidak boleh negatif, didapat {length}")
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    angles = np.arange(length)[:, None] * omega[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2] = np.cos(angles)
    pe[:, 1::2] = np.sin(angles)
    return pe
"""

HOSTILE_ID = "\"'><script>alert('id')<!--"
HOSTILE_TEXT = "</td></tr></table><script>alert('msg')</script><img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def graded(_course_template, tmp_path_factory) -> CourseCopy:
    """``course_copy`` at module scope (the same copy of the course template), autograded once."""
    root = tmp_path_factory.mktemp("report") / "course"
    shutil.copytree(_course_template, root)
    copy = CourseCopy(root)
    copy.submit("alice", {n: reference_nb(n) for n in ("01_embedding", "02_sinusoidal")})
    copy.submit("bob", {n: release_nb(n) for n in ("01_embedding", "02_sinusoidal")})
    copy.submit(
        "carol",
        {"02_sinusoidal": with_code(reference_nb("02_sinusoidal"), "positional_encoding", SIN_COS_SWAPPED)},
    )
    proc = copy.nbgrader("autograde", ASSIGNMENT, check=False)
    for student, notebook in (
        ("alice", "01_embedding"),
        ("bob", "02_sinusoidal"),
        ("carol", "02_sinusoidal"),
    ):
        record = root / "autograded" / student / ASSIGNMENT / f"{notebook}.grading.json"
        assert record.is_file(), f"autograde did not grade {student}/{notebook}:\n{proc.stderr[-4000:]}"
    return copy


def gradebook(copy: CourseCopy) -> Gradebook:
    return Gradebook(copy.course.db_url, course_id="pe-course")


def gradebook_truth(copy: CourseCopy):
    """(student -> final score, {(student, notebook, grade id) needing a manual grade}) via nbgrader's API."""
    totals, manual = {}, set()
    with gradebook(copy) as gb:
        for sub in gb.find_assignment(ASSIGNMENT).submissions:
            totals[sub.student.id] = max(0.0, sub.score - sub.late_submission_penalty)
            for nb in sub.notebooks:
                manual |= {(sub.student.id, nb.name, g.name) for g in nb.grades if g.needs_manual_grade}
    return totals, manual


class Page(HTMLParser):
    """What the report's HTML holds: images, tags seen, rows with data-* attributes, and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.images: list[dict[str, str]] = []
        self.rows: list[dict[str, str]] = []
        self.links: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "img":
            self.images.append(attrs)
        if tag == "tr" and any(k.startswith("data-") for k in attrs):
            self.rows.append(attrs)
        for key in ("href", "src"):
            if key in attrs and tag != "img":
                self.links.append(attrs[key])

    def handle_data(self, data):
        self.text.append(data)

    @property
    def plain(self) -> str:
        return " ".join(" ".join(self.text).split())


def parse(path: Path) -> tuple[str, Page]:
    source = path.read_text(encoding="utf-8")
    page = Page()
    page.feed(source)
    page.close()
    return source, page


def png_of(img: dict[str, str]) -> bytes:
    prefix = "data:image/png;base64,"
    assert img["src"].startswith(prefix)
    return base64.b64decode(img["src"][len(prefix) :], validate=True)


def assert_readable_png(data: bytes) -> None:
    assert data.startswith(PNG_SIGNATURE)
    try:
        from PIL import Image
    except ImportError:  # matplotlib depends on Pillow, so this is not expected
        import matplotlib.image

        assert matplotlib.image.imread(io.BytesIO(data), format="png").ndim == 3
        return
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100


# --------------------------------------------------------------------------------------------
def test_collect_matches_gradebook_and_records(graded):
    with gradebook(graded) as gb:
        courses_before = {c.id for c in gb.db.query(DbCourse).all()}
    data = collect(graded.course)
    totals, manual = gradebook_truth(graded)

    assert [s.student for s in data.students] == ["alice", "bob", "carol"]
    assert {s.student: s.total for s in data.students} == pytest.approx(totals)
    assert data.max_total == TOTAL_POINTS
    assert data.student("alice").total == 11  # 7 + 4 autograded points; written answers not graded yet
    # missing notebooks: no submitted file (nbgrader scored them 0)
    assert data.student("alice").missing == ["03_rotation", "04_similarity"]
    assert data.student("carol").missing == ["01_embedding", "03_rotation", "04_similarity"]
    assert ("carol", "01_embedding", "missing-notebook") in {
        (i.student, i.notebook, i.kind) for i in data.issues
    }

    # manual grading: exactly the gradebook's needs_manual_grade, and alice's written answers are there
    assert set(data.manual) == manual
    assert {
        ("alice", "01_embedding", "answer_untrained_positions"),
        ("alice", "02_sinusoidal", "answer_sin_only"),
    } <= manual
    assert all(gid.startswith("answer_") for _, _, gid in data.manual)

    # misconception from carol's record, with the hint the graders' catalogue gave her
    catalogue = {
        m.id: m.hint for m in load_suite(graded.course.graders).misconceptions["positional_encoding"]
    }
    [swapped] = [m for m in data.misconceptions if m.id == "sin-cos-swapped"]
    assert (swapped.function, swapped.students, swapped.hint) == (
        "positional_encoding",
        ["carol"],
        catalogue["sin-cos-swapped"],
    )

    # pass rates: test cells from the gradebook over the students who submitted the notebook
    cells = {(c.notebook, c.grade_id): c for c in data.cells}
    pe = cells[("02_sinusoidal", "test_positional_encoding")]
    assert (pe.full, pe.n) == (1, 3)
    assert cells[("01_embedding", "test_embed")].n == 2  # carol did not submit 01
    assert cells[("03_rotation", "test_apply_rope")].n == 0
    with gradebook(graded) as gb:
        assert {c.id for c in gb.db.query(DbCourse).all()} == courses_before  # reading adds no course row
    # the released stubs earn nothing (checked last: it is the graders' verdict, not the report's)
    assert data.student("bob").total == 0


def test_clauses_count_who_lost_each_as_the_gradebook_and_the_notebook_say(graded):
    data = collect(graded.course)
    clauses = {(c.grade_id, c.clause): c for c in data.clauses}
    cells = {(c.notebook, c.grade_id): c for c in data.cells}

    # every clause the notebook states, with its text and points, over the students who submitted it
    for name in ("01_embedding", "02_sinusoidal"):
        for fn, stated in parse_contracts(release_nb(name)).items():
            cell = cells[(name, f"test_{fn}")]
            assert {k for gid, k in clauses if gid == cell.grade_id} == set(stated), cell.grade_id
            for k, clause in stated.items():
                stat = clauses[(cell.grade_id, k)]
                assert (stat.text, stat.max_points) == (clause.text, clause.points)
                assert stat.submitted == cell.n == stat.graded  # 2 for 01 (carol did not submit it), 3 for 02

    # a student lost exactly the points of the clauses the report says they lost (all or nothing)
    for student in data.students:
        for (notebook, gid), cell in cells.items():
            if notebook in student.missing or not cell.n:
                continue
            lost = sum(
                c.max_points for c in data.clauses if c.grade_id == gid and student.student in c.students
            )
            assert lost == pytest.approx(cell.max_score - student.cell_scores[(notebook, gid)]), (
                student,
                gid,
            )
    assert not any("alice" in c.students for c in data.clauses)  # the reference keeps every clause

    # carol's sin/cos swap: K1 of positional_encoding, with the failure charged there and who found it
    k1 = clauses[("test_positional_encoding", "K1")]
    assert "carol" in k1.students and k1.lost_share == pytest.approx(k1.lost / 3)
    assert any("salah untuk input positional_encoding(" in m for m in k1.messages)  # carol's, with its input
    assert sum(n for i, n in k1.inputs.items() if i.startswith("positional_encoding(")) >= 1
    assert (
        k1.found_by["kasus"] == k1.lost
    )  # the cases (the chapter's example among them) find it for everyone
    # the stubs lose every clause of 01 (converted to clause credit), each with a failure shown
    for c in data.clauses:
        if c.notebook == "01_embedding":
            assert (c.students, c.lost_share) == (["bob"], 0.5) and c.messages, c.clause


def test_report_html_is_self_contained_with_plots_and_findings(graded):
    path = write_report(graded.course)
    assert path == graded.root / "reports" / ASSIGNMENT / "report.html"
    source, page = parse(path)

    assert source.startswith("<!DOCTYPE html>")
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    assert all(link.startswith("#") or link == "grades.csv" for link in page.links), page.links
    assert len(page.images) == PLOTS
    assert len(source.split("<img ")) - 1 == PLOTS
    for img in page.images:
        assert len(img["alt"]) > 20
        assert_readable_png(png_of(img))

    text = page.plain
    assert "Grading report: positional-encoding" in text
    assert "Students 3 with a submission" in text
    totals, _ = gradebook_truth(graded)
    mean, median = statistics.fmean(totals.values()), statistics.median(totals.values())
    assert f"Mean total {mean:.2f} / {TOTAL_POINTS:g}" in text
    assert f"Median total {median:.2f} / {TOTAL_POINTS:g}" in text

    # the clauses: one row per clause and cell, a plot with its alternative text
    clause_rows = {(r["data-cell"], r["data-clause"]) for r in page.rows if "data-clause" in r}
    assert {(c.grade_id, c.clause) for c in collect(graded.course).clauses} == clause_rows
    assert ("test_positional_encoding", "K1") in clause_rows
    assert any(
        img["alt"].startswith("Horizontal bar chart of the share of students who lost each")
        for img in page.images
    )
    assert "Clauses: how many students lost each" in text

    # misconception id and its (Indonesian) hint, with the student
    hint = next(
        m.hint
        for m in load_suite(graded.course.graders).misconceptions["positional_encoding"]
        if m.id == "sin-cos-swapped"
    )
    assert "sin-cos-swapped" in text and " ".join(hint.split()) in text
    assert {"data-misconception": "sin-cos-swapped"} in page.rows

    rows = {(r.get("data-student"), r.get("data-notebook", ""), r.get("data-kind", "")) for r in page.rows}
    assert ("carol", "01_embedding", "missing-notebook") in rows
    assert ("alice", "", "manual") in rows and ("carol", "", "manual") in rows
    assert ("bob", "", "manual") not in rows
    assert "3 grades (written answers" in text

    # students x notebooks table: one row per student, "missing" for carol's 01
    assert {(s, "", "") for s in ("alice", "bob", "carol")} <= rows
    assert text.count("missing") >= 7  # 2 + 2 + 3 missing notebooks in the table


def test_grades_csv_is_nbgraders_export_with_gradebook_totals(graded):
    write_report(graded.course)
    csv_path = graded.root / "reports" / ASSIGNMENT / "grades.csv"
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    totals, _ = gradebook_truth(graded)
    assert sorted(r["student_id"] for r in rows) == sorted(totals) == ["alice", "bob", "carol"]
    for row in rows:
        assert row["assignment"] == ASSIGNMENT
        assert float(row["score"]) == pytest.approx(totals[row["student_id"]])
        assert float(row["max_score"]) == TOTAL_POINTS


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own add_submission, new student
def test_hostile_ids_notes_and_messages_are_escaped(graded, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(graded.root, root, ignore=shutil.ignore_patterns("reports"))
    copy = CourseCopy(root)
    folder = root / "autograded" / "alice" / ASSIGNMENT
    record = json.loads((folder / "01_embedding.grading.json").read_text(encoding="utf-8"))

    # a student whose id is markup, with a record full of markup
    with gradebook(copy) as gb:
        gb.update_or_create_student(HOSTILE_ID)
        gb.update_or_create_submission(ASSIGNMENT, HOSTILE_ID)
    copy.submit(HOSTILE_ID, {"01_embedding": reference_nb("01_embedding")})
    record["student"] = HOSTILE_ID
    record["notes"] = [f"suspected-tampering: {HOSTILE_TEXT}", f"restored-cell: {HOSTILE_TEXT}", HOSTILE_TEXT]
    cell = record["cells"][0]
    cell["status"] = "timeout"
    cell["misconceptions"] = [HOSTILE_TEXT]
    cell["clauses"][0].update(
        passed=False, points=0.0, message=HOSTILE_TEXT, input=HOSTILE_TEXT, checks=[HOSTILE_TEXT]
    )
    cell["clauses"][1].update(  # a clause only this record names: its text is shown, and in the plot
        clause=HOSTILE_ID, text=f"$\\notacommand{{$ {HOSTILE_TEXT} $", passed=False, points=0.0
    )
    hostile_dir = root / "autograded" / HOSTILE_ID / ASSIGNMENT
    hostile_dir.mkdir(parents=True)
    (hostile_dir / "01_embedding.grading.json").write_text(json.dumps(record), encoding="utf-8")
    # another student's record that is not JSON, and one that claims to be someone else's
    (root / "autograded" / "carol" / ASSIGNMENT / "02_sinusoidal.grading.json").unlink()
    (root / "autograded" / "carol" / ASSIGNMENT / "02_sinusoidal.grading.json").write_text(
        "{not json <script>"
    )
    bob = root / "autograded" / "bob" / ASSIGNMENT / "01_embedding.grading.json"
    bob_record = json.loads(bob.read_text(encoding="utf-8"))
    bob.unlink()
    bob.write_text(json.dumps({**bob_record, "student": HOSTILE_TEXT}), encoding="utf-8")

    out = tmp_path / "out"
    path = write_report(copy.course, out)
    assert path == out / "report.html" and (out / "grades.csv").is_file()
    assert not (root / "reports").exists()
    source, page = parse(path)

    assert "<script" not in source.lower()
    assert all(set(img) <= {"class", "src", "alt"} for img in page.images)  # no injected <img onerror>
    assert "script" not in page.tags and page.tags.count("table") == source.count("<table")
    assert "&lt;script&gt;alert(&#39;msg&#39;)&lt;/script&gt;" in source
    assert "&lt;script&gt;alert(&#39;id&#39;)" in source

    rows = {(r.get("data-student"), r.get("data-notebook", ""), r.get("data-kind", "")) for r in page.rows}
    assert (HOSTILE_ID, "01_embedding", "suspected-tampering") in rows  # attribute round-trips unchanged
    assert (HOSTILE_ID, "01_embedding", "restored-cell") in rows
    assert (HOSTILE_ID, "01_embedding", "note") in rows
    assert (HOSTILE_ID, "01_embedding", "timeout") in rows
    assert ("carol", "02_sinusoidal", "unreadable-grading-record") in rows
    assert ("bob", "01_embedding", "record-mismatch") in rows
    assert {"data-misconception": HOSTILE_TEXT} in page.rows
    assert any(r.get("data-clause") == HOSTILE_ID[:40] for r in page.rows)  # a clause id too
    assert f"$\\notacommand{{$ {HOSTILE_TEXT} $" in page.plain  # its text, as text
    assert HOSTILE_TEXT in page.plain  # shown, as text
    assert "Suspected tampering 1 students" in page.plain

    assert len(page.images) == PLOTS  # a title with broken mathtext renders as plain text
    for img in page.images:
        assert_readable_png(png_of(img))


def test_students_without_submission_or_not_graded_need_attention(graded, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(graded.root, root, ignore=shutil.ignore_patterns("reports"))
    copy = CourseCopy(root)
    with gradebook(copy) as gb:
        gb.update_or_create_student("dave")  # on the roster, never submitted
    copy.submit("erin", {"01_embedding": reference_nb("01_embedding")})  # submitted after the autograde run

    data = collect(copy.course)
    assert [s.student for s in data.students] == ["alice", "bob", "carol"]  # statistics: graded submissions
    assert (data.no_submission, data.not_graded) == (["dave"], ["erin"])
    _, page = parse(write_report(copy.course))
    rows = {(r.get("data-student"), r.get("data-notebook", ""), r.get("data-kind", "")) for r in page.rows}
    assert {("dave", "", "no-submission"), ("erin", "", "not-graded")} <= rows


def test_hints_come_from_the_records_with_no_graders_folder(graded, tmp_path):
    """The report reads the records alone: without the graders, carol's hint is still shown; a record
    written before records kept hints (version 5: ids only) shows its misconception without one."""
    hint = next(
        m.hint
        for m in load_suite(graded.course.graders).misconceptions["positional_encoding"]
        if m.id == "sin-cos-swapped"
    )
    root = tmp_path / "course"
    shutil.copytree(graded.root, root, ignore=shutil.ignore_patterns("reports", "graders"))
    assert not (root / "graders").exists()
    path = root / "autograded" / "bob" / ASSIGNMENT / "02_sinusoidal.grading.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["version"] = 5
    record["cells"][0]["misconceptions"] = ["an-old-id"]
    path.write_text(json.dumps(record), encoding="utf-8")

    data = collect(CourseCopy(root).course)
    found = {m.id: (m.function, m.students, m.hint) for m in data.misconceptions}
    assert found["sin-cos-swapped"] == ("positional_encoding", ["carol"], hint)
    assert found["an-old-id"] == (record["cells"][0]["function"], ["bob"], None)
    _, page = parse(write_report(CourseCopy(root).course, tmp_path / "out"))
    assert (
        " ".join(hint.split()) in page.plain
        and "(no hint in the records: graded before records kept hints)" in page.plain
    )


V3_MESSAGE = "`one_hot` melempar IndexError untuk input one_hot([], 4): <b>index 0</b>"


def v3_check(name: str, clause: str, points: float, failure: dict[str, str] | None = None) -> dict:
    """A check as a version-3 record wrote it: with its own points and its clause's text."""
    return {
        "name": name,
        "title": f"judul {name}",
        "passed": failure is None,
        "points": 0.0 if failure else points,
        "max_points": points,
        "clause": clause,
        "clause_text": f"teks {clause}",
        "message": "",
        "input": "",
        "expected": "",
        "obtained": "",
        **(failure or {}),
    }


def test_a_version_3_record_is_shown_per_clause(graded, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(graded.root, root, ignore=shutil.ignore_patterns("reports"))
    path = root / "autograded" / "bob" / ASSIGNMENT / "01_embedding.grading.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    failure = {"message": V3_MESSAGE, "input": "one_hot([], 4)", "expected": "array berbentuk (0, 4)"}
    record.update(
        version=3,
        cells=[
            {
                "grade_id": "test_one_hot",
                "function": "one_hot",
                "score": 0.75,
                "max_score": 1.0,
                "status": "ok",
                "checks": [
                    v3_check("kasus", "K1", 0.25),
                    v3_check("acak", "K1", 0.25),
                    v3_check("list", "K2", 0.25),
                    v3_check("ids-kosong", "K3", 0.25, failure),
                ],
                "misconceptions": [],
            }
        ],
    )
    path.unlink()
    path.write_text(json.dumps(record), encoding="utf-8")

    data = collect(CourseCopy(root).course)
    clauses = {(c.grade_id, c.clause): c for c in data.clauses}
    k3 = clauses[("test_one_hot", "K3")]  # alice's v4 record and bob's v3 one, counted together
    assert (k3.students, k3.graded, k3.submitted) == (["bob"], 2, 2)
    assert (k3.messages, k3.inputs, k3.found_by) == (
        {V3_MESSAGE: 1},
        {"one_hot([], 4)": 1},
        {"ids-kosong": 1},
    )
    assert clauses[("test_one_hot", "K1")].students == []  # the checks of K1 passed: the clause kept
    assert clauses[("test_embed", "K1")].graded == 1  # bob's record has no test_embed any more

    source, page = parse(write_report(CourseCopy(root).course, tmp_path / "out"))
    assert {"data-notebook": "01_embedding", "data-cell": "test_one_hot", "data-clause": "K3"} in page.rows
    assert "index 0" in page.plain and "&lt;b&gt;index 0&lt;/b&gt;" in source
    assert "clause results for 1 of 2 submissions" in page.plain  # test_embed: bob's v3 record lacks it

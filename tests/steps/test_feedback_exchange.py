"""What `pe-course feedback --exchange` needs from the course (found by the browser tests, issue 10):
the user's and the system's nbgrader config (the exchange's root) and nbgrader's own files beside the
feedback pages."""

from __future__ import annotations

import os
import shutil

import nbformat
import pytest
from conftest import COURSE, REPO, reference_nb

from pe_course.course import Course
from pe_course.steps.feedback_pages import tidy


def test_course_config_reads_the_users_nbgrader_config_under_the_courses(tmp_path, monkeypatch):
    user = tmp_path / "user-jupyter"
    user.mkdir()
    (user / "nbgrader_config.py").write_text(
        "c = get_config()\nc.Exchange.root = '/srv/exchange'\nc.CourseDirectory.course_id = 'from-user'\n"
    )
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(user))
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(REPO / "nbgrader_config.py", course)
    cfg = Course(course, "positional-encoding").config()
    assert cfg.Exchange.root == "/srv/exchange", "the exchange set in ~/.jupyter/nbgrader_config.py is used"
    assert cfg.CourseDirectory.course_id == "pe-course", "the course's own config wins"


def test_tidy_keeps_the_pages_and_what_release_feedback_needs(tmp_path):
    course = Course(tmp_path, "positional-encoding")
    folder = course.feedback / "ani" / course.assignment
    (folder / "extra").mkdir(parents=True)
    for name in (
        "01_embedding.html",
        "timestamp.txt",
        "submission_secret.txt",
        "01_embedding.grading.json",
        "catatan.pdf",
        "extra/timestamp.txt",
    ):
        (folder / name).write_text("x")
    removed = tidy(course, "ani")
    assert sorted(p.name for p in folder.iterdir()) == [
        "01_embedding.html",
        "submission_secret.txt",
        "timestamp.txt",
    ]
    assert sorted(removed) == ["01_embedding.grading.json", "catatan.pdf", "extra/timestamp.txt"]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _feedback_notebook(markdown: str = "$x^2$ dan **tebal**"):
    import nbformat

    v4 = nbformat.v4
    plot = v4.new_code_cell("plt.plot(x)")
    plot.outputs = [
        v4.new_output("stream", name="stdout", text="grafik:\n"),
        v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
    ]
    described = v4.new_code_cell("plt.show()", metadata={"alt": "grafik PE"})
    described.outputs = [v4.new_output("display_data", data={"image/png": PNG})]
    failed = v4.new_code_cell("1 / 0")
    failed.outputs = [
        v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])
    ]
    return v4.new_notebook(cells=[v4.new_markdown_cell(markdown), plot, described, failed])


def _pages(exporter_class, nb, config) -> str:
    from nbgrader.converters import GenerateFeedback

    app = GenerateFeedback(config=config)
    exporter = exporter_class(parent=app, config=app.config)
    graded = {"notebook": "02_sinusoidal", "score": 1.5, "max_score": 3.0, "late_penalty": 0}
    return exporter.from_notebook_node(nb, resources={"nbgrader": graded})[0]


def test_the_feedback_pages_are_nbconverts_own_document():
    """The feedback exporter skips nbconvert's BeautifulSoup pass (it gives the images their
    alternative text beforehand): parsed, its page is exactly nbconvert's; a page the pass would still
    change (raw HTML without ``alt`` in a markdown cell) is nbconvert's byte for byte."""
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter

    from pe_course.steps.feedback_pages import NO_ALT_TEXT, FeedbackExporter

    config = COURSE.config()
    nb = _feedback_notebook()
    ours, stock = _pages(FeedbackExporter, nb, config), _pages(HTMLExporter, nb, config)
    assert ours != stock and str(BeautifulSoup(ours, features="html.parser")) == stock
    assert ours.count(f'alt="{NO_ALT_TEXT}"') == 1 and 'alt="grafik PE"' in ours
    assert "alt" not in nb.cells[1].outputs[1].get("metadata", {}).get("image/png", {})  # not changed
    raw = _feedback_notebook('Lihat <img src="gambar.png"> di atas.')
    assert _pages(FeedbackExporter, raw, config) == _pages(HTMLExporter, raw, config)


def test_the_feedback_exporter_compiles_its_templates_once_per_process(monkeypatch):
    """nbgrader builds a new exporter for every student; the feedback's templates are compiled by the
    first one only, and the pages are the same."""
    import jinja2
    from nbgrader.converters import GenerateFeedback

    config = COURSE.config()
    assert GenerateFeedback(config=config).exporter_class.__name__ == "FeedbackExporter"
    real_compile = jinja2.Environment.compile
    compiled = []
    monkeypatch.setattr(
        jinja2.Environment, "compile", lambda self, *a, **k: compiled.append(1) or real_compile(self, *a, **k)
    )
    pages, nb = [], _feedback_notebook()
    for _ in range(2):
        compiled.clear()
        pages.append(_pages(GenerateFeedback(config=config).exporter_class, nb, config))
    assert compiled == [], "the second exporter compiled templates again"
    assert pages[0] == pages[1] and "(Score: 1.5 / 3.0)" in pages[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a folder another unix user owns")
def test_collect_takes_folders_of_the_student_or_the_collector_and_leaves_a_forgery(course_copy, tmp_path):
    """`OwnerCheckedCollect` through the real `nbgrader collect`: a folder owned by the user who collects
    is taken (a one-account setup), one owned by another user in a student's name is left with a line, and
    so is one in which another user replaced a file (the student's earlier submission is taken instead)."""
    inbound = tmp_path / "exchange" / "pe-course" / "inbound"
    inbound.mkdir(parents=True)
    nb = nbformat.writes(reference_nb("01_embedding"))
    made = {}
    for student, uid, hour in (
        ("ani", os.geteuid(), 10),
        ("budi", 65534, 10),
        ("citra", os.geteuid(), 9),
        ("citra", os.geteuid(), 11),
    ):  # 65534: nobody
        when = f"2026-12-04 {hour:02d}:00:00.000000 UTC"
        folder = inbound / f"{student}+positional-encoding+{when}+x{student}{hour}"
        folder.mkdir()
        (folder / "01_embedding.ipynb").write_text(nb, encoding="utf-8")
        (folder / "timestamp.txt").write_text(when, encoding="utf-8")
        for path in (folder, *folder.iterdir()):
            os.chown(path, uid, uid)
        made[student, hour] = folder
    # citra's latest submission: its notebook replaced by another user (the folder is writable by all)
    os.chown(made["citra", 11] / "01_embedding.ipynb", 65534, 65534)
    proc = course_copy.nbgrader(
        "collect", "positional-encoding", f"--Exchange.root={tmp_path / 'exchange'}", "--update"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    submitted = course_copy.root / "submitted"
    assert (submitted / "ani" / "positional-encoding" / "01_embedding.ipynb").is_file()
    assert not (submitted / "budi").exists()
    assert "Not collected" in proc.stdout + proc.stderr and "made by nobody" in proc.stdout + proc.stderr
    taken = submitted / "citra" / "positional-encoding" / "timestamp.txt"
    assert taken.read_text().startswith("2026-12-04 09:00"), "the earlier submission, all citra's own"
    assert "holds files made by nobody" in proc.stdout + proc.stderr

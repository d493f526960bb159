"""What `pe-course feedback --exchange` needs from the course (found by the browser tests, issue 10):
the user's and the system's nbgrader config (the exchange's root) and nbgrader's own files beside the
feedback pages."""

from __future__ import annotations

import shutil

from conftest import REPO

from pe_course.course import Course
from pe_course.feedback import tidy


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

"""A course round on a real JupyterHub with real unix users, in chromium (issue 32).

One instructor (``pe-instructor``), one teaching assistant (``pe-ta``) and three students
(``pe-student1..3``), each a unix user made with ``useradd`` and logged in through PAM with their own
password; every JupyterLab is spawned as its user on its own origin (``NAME.localhost``). The course
directory is the instructor's; the course's formgrader is a hub service run as the instructor there,
reachable by the course staff's hub group only. In order:

1. the students log in, fetch, work, Validate and submit from the Assignment List;
2. a student tries to reach another's server, the staff's formgrader, and another's submission through
   the filesystem and nbgrader: each attempt fails;
3. the instructor collects and grades with ``pe-course grade`` as themselves (not root, in the control
   group ``pe-course setup-groups`` delegated to them); the assistant grades the written answer in
   formgrader, inside JupyterLab's Formgrader tab (its iframe: blank on JupyterHub >= 4.1 unless each
   server has its own origin, see hub.py); the instructor returns feedback through the exchange;
4. each student fetches and reads only their own feedback.

The hub needs root (PAM, spawning as users), npm's ``configurable-http-proxy`` and chromium; without one of
them the module is skipped with one line saying what to install. The deployment guide
(docs/deployment.md, "JupyterHub") is written from this file."""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO
from playwright.sync_api import Browser, Page, expect

from .conftest import require_chromium

require_chromium()
if os.geteuid() != 0:
    pytest.skip(
        "the hub runs as root (PAM reads /etc/shadow; servers start as their users): run as root",
        allow_module_level=True,
    )
if importlib.util.find_spec("jupyterhub") is None or importlib.util.find_spec("pamela") is None:
    pytest.skip("no jupyterhub in this venv: pip install -e '.[test]'", allow_module_level=True)

from unix_users import INSTRUCTOR, STUDENTS, TA, as_user, ensure_user, users_venv  # noqa: E402

from . import lab, steps  # noqa: E402
from .hub import COURSE_ID, FRAME_SELF, Hub, proxy_command  # noqa: E402
from .steps import ANSWER_ID, ASSIGNMENT, COMMENT, NOTEBOOK  # noqa: E402

if proxy_command() is None:
    pytest.skip(
        "no configurable-http-proxy on PATH (the hub's proxy): npm install -g configurable-http-proxy",
        allow_module_level=True,
    )

S1, S2, S3 = STUDENTS
# What a fresh JupyterLab would pop up over the page (news, update checks): off for every user.
LAB_SETTINGS = '{"fetchNews": "false", "checkForUpdates": false}'


@dataclass
class Campus:
    hub: Hub
    venv: Path
    browser: Browser
    pages: dict[str, Page] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)

    @property
    def course(self) -> Path:
        return self.hub.course

    def instructor(self, *argv: str) -> subprocess.CompletedProcess:
        """A command of the instructor, as the instructor, in the course directory (their terminal)."""
        done = as_user(INSTRUCTOR, self.venv, list(argv), self.course)
        assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def log_in(self, user: str) -> Page:
        """The user's browser, logged in to the hub with their own password, on their JupyterLab."""
        if user in self.pages:
            return self.pages[user]
        context = self.browser.new_context(viewport={"width": 1280, "height": 900}, locale="id-ID")
        page = context.new_page()
        page.goto(self.hub.url("hub/login"))
        page.fill("#username_input", user)
        page.fill("#password_input", self.hub.passwords[user])
        page.click("#login_submit")
        page.wait_for_url(f"**/user/{user}/lab**", timeout=240_000)  # the hub spawns their server
        assert page.url.startswith(f"http://{user}.localhost:"), page.url  # their own origin
        page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=90_000)
        expect(page.locator("#jp-menu-panel")).to_be_visible()
        self.pages[user] = page
        return page

    def require(self, step: str) -> None:
        if step not in self.done:
            pytest.skip(f"needs {step}, done by an earlier test of this module")


def _home(user: str) -> Path:
    return Path(f"/home/{user}")


def _fresh_home(user: str) -> None:
    """The user's home as a new account's, with the deployment guide's mode (0700) and JupyterLab's
    notices off; what earlier tests left of a course there (fetched notebooks, nbgrader's cache,
    a personal nbgrader config naming another exchange) is removed."""
    home = _home(user)
    for name in (ASSIGNMENT, ".local", ".jupyter", ".cache"):
        shutil.rmtree(home / name, ignore_errors=True)
    settings = home / ".jupyter/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(LAB_SETTINGS)
    subprocess.run(["chown", "-R", f"{user}:{user}", str(home)], check=True)
    home.chmod(0o700)


@pytest.fixture(scope="module")
def campus(browser: Browser):
    venv = users_venv()
    users = (INSTRUCTOR, TA, *STUDENTS)
    passwords = {user: secrets.token_urlsafe(12) for user in users}
    for user in users:
        ensure_user(user)
        _fresh_home(user)
    lines = "".join(f"{user}:{password}\n" for user, password in passwords.items())
    subprocess.run(["chpasswd"], input=lines, text=True, check=True)
    made = subprocess.run(
        [sys.executable, "-m", "pe_course.cli", "setup-groups", "--user", INSTRUCTOR, "--under", "self"],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"setup-groups could not hand over a control group here: {made.stdout.strip()}")

    root = Path(tempfile.mkdtemp(prefix="pe-hub-", dir="/var/tmp"))  # /tmp/pytest-of-root is 0700
    root.chmod(0o755)
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # nbgrader's documentation: the exchange is writable by everyone
    course = root / "course"
    for name in ("source", "graders", "release"):
        shutil.copytree(
            REPO / name, course / name, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis")
        )
    config = (REPO / "nbgrader_config.py").read_text() + f"\nc.Exchange.root = {str(exchange)!r}\n"
    (course / "nbgrader_config.py").write_text(config)
    subprocess.run(["chown", "-R", f"{INSTRUCTOR}:{INSTRUCTOR}", str(course)], check=True)

    hub = Hub(root / "hub", venv, course, exchange, INSTRUCTOR, TA, STUDENTS, passwords)
    world = Campus(hub, venv, browser)
    world.instructor("pe-course", "release")
    world.instructor("nbgrader", "release_assignment", ASSIGNMENT)
    hub.start()
    try:
        yield world
    finally:
        for page in world.pages.values():
            page.context.close()
        left = hub.stop()
        for user in users:
            _fresh_home(user)
        shutil.rmtree(root, ignore_errors=True)
    assert not left, f"processes of the hub's users left running after it stopped: {left}"


def test_students_log_in_fetch_work_validate_and_submit(campus: Campus, shots):
    # PAM checks each user's own password: another's is refused
    context = campus.browser.new_context()
    page = context.new_page()
    page.goto(campus.hub.url("hub/login"))
    page.fill("#username_input", S1)
    page.fill("#password_input", campus.hub.passwords[S2])
    page.click("#login_submit")
    expect(page.locator("p.login_error")).to_contain_text("Invalid username or password")
    context.close()

    # S1 does the whole assignment notebook, S2 only one function, S3 submits what was released
    for student, functions in (
        (S1, ("frequencies", "positional_encoding")),
        (S2, ("frequencies",)),
        (S3, ()),
    ):
        page = campus.log_in(student)
        fetched = steps.fetch(page)
        assert (_home(student) / ASSIGNMENT / f"{NOTEBOOK}.ipynb").is_file()
        assert (_home(student) / ASSIGNMENT / f"{NOTEBOOK}.ipynb").stat().st_uid == ensure_user(
            student
        ).pw_uid
        if functions:
            steps.open_notebook(page, fetched)
            steps.write_solution(page, functions, answer=steps.ANSWER if student == S1 else None)
            if student == S1:
                lab.run_all(page)
                lab.wait_idle(page)
                check = lab.cell_with(page, 'check_function("positional_encoding", ', ".jp-CodeCell")
                expect(check.locator(".jp-OutputArea-output").first).to_contain_text(
                    "Semua ketentuan lolos pada kasus publik"
                )
            steps.validate(page, passes=student == S1)
        steps.submit(page)
        shots(page, f"{student}-submitted")

    inbound = campus.hub.exchange / COURSE_ID / "inbound"
    owners = sorted((p.name.split("+")[0], p.stat().st_uid) for p in inbound.iterdir())
    assert owners == [(s, ensure_user(s).pw_uid) for s in STUDENTS], owners  # one each, by its own user
    campus.done.add("the students' submissions")


def test_a_student_cannot_reach_another_students_server_work_or_the_staff_formgrader(campus: Campus, shots):
    campus.require("the students' submissions")
    page = campus.log_in(S2)
    for url, what in (
        (campus.hub.user_url(S1, "lab"), "S1's JupyterLab"),
        (campus.hub.service_url(), "formgrader"),
    ):
        reply = page.goto(url)
        assert reply is not None
        expect(page.locator("body")).to_contain_text("403", timeout=60_000)
        assert "jp-menu-panel" not in page.content(), f"{S2} reached {what}"
        shots(page, f"{S2}-refused-{what}")
    lab.open_lab(page, campus.hub.user_url(S2, "lab"))

    inbound = campus.hub.exchange / COURSE_ID / "inbound"
    (theirs,) = [p for p in inbound.iterdir() if p.name.startswith(f"{S1}+")]
    tries = {
        "list the submissions": ["ls", str(inbound)],
        "read another's notebook": ["cat", str(_home(S1) / ASSIGNMENT / f"{NOTEBOOK}.ipynb")],
        "list another's home": ["ls", str(_home(S1))],
    }
    for attempt, argv in tries.items():
        done = as_user(S2, campus.venv, argv, _home(S2))
        assert done.returncode != 0 and "Permission denied" in done.stderr, (attempt, done.stdout[:300])
    listed = as_user(S2, campus.venv, ["nbgrader", "list", "--inbound"], _home(S2))
    assert S1 not in listed.stdout + listed.stderr and theirs.name not in listed.stdout + listed.stderr


def test_instructor_grades_as_themselves_and_the_assistant_grades_in_formgrader(campus: Campus, shots):
    campus.require("the students' submissions")
    campus.instructor("nbgrader", "collect", ASSIGNMENT)
    graded = campus.instructor("pe-course", "grade")
    assert "one resource group per run (cgroup v1, delegated)" in graded.stdout, graded.stdout[:2000]
    instructor_uid = ensure_user(INSTRUCTOR).pw_uid
    for student in STUDENTS:
        folder = campus.course / "autograded" / student / ASSIGNMENT
        assert folder.stat().st_uid == instructor_uid

    def auto(student: str) -> tuple[float, float]:
        record = json.loads(
            (campus.course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.grading.json").read_text()
        )
        return record["score"], record["max_score"]

    full = auto(S1)
    assert full[0] == full[1] > 0, full
    assert 0 < auto(S2)[0] < full[1] and auto(S3)[0] == 0, (auto(S2), auto(S3))

    # The instructor reaches the course's formgrader service too; the assistant grades there.
    page = campus.log_in(INSTRUCTOR)
    lab.open_lab(page, campus.hub.service_url("lab"))
    page = campus.log_in(TA)
    lab.open_lab(page, campus.hub.service_url("lab"))
    with page.expect_response(
        lambda r: "/formgrader" in r.url and r.request.resource_type == "document"
    ) as shown:
        lab.menu(page, "Nbgrader", "nbgrader:open-formgrader")
    # what lets it load: it comes from the service's own origin, whose pages only that origin may frame
    assert shown.value.url.startswith(campus.hub.service_url("formgrader")), shown.value.url
    assert shown.value.headers.get("content-security-policy") == FRAME_SELF, shown.value.headers
    frame_element = page.locator("#jp-main-dock-panel iframe").first
    expect(frame_element).to_be_visible()
    frame = frame_element.element_handle().content_frame()
    assert frame is not None
    expect(frame.get_by_text("Manage Assignments").first).to_be_visible(timeout=60_000)  # not blank
    shots(page, "formgrader-in-jupyterlab-through-the-hub")

    from pe_course.course import Course

    with Course(campus.course).gradebook() as gb:
        submission = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, S1).id
    frame.goto(campus.hub.service_url(f"formgrader/submissions/{submission}/?index=0"))
    answer = steps.grade_written_answer(frame)
    answer.scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "assistant-scored-the-written-answer")

    def saved():
        with Course(campus.course).gradebook() as gb:
            grade = gb.find_grade(ANSWER_ID, NOTEBOOK, ASSIGNMENT, S1)
            comment = gb.find_comment(ANSWER_ID, NOTEBOOK, ASSIGNMENT, S1)
            return grade.manual_score, comment.manual_comment

    for _ in range(50):
        if saved() == (1.5, COMMENT):
            break
        page.wait_for_timeout(200)
    assert saved() == (1.5, COMMENT), "formgrader saved the assistant's points and comment"
    assert (campus.course / "gradebook.db").stat().st_uid == instructor_uid

    campus.instructor("pe-course", "feedback", ASSIGNMENT, "--exchange")
    campus.done.add("the feedback")


def test_each_student_fetches_and_reads_only_their_own_feedback(campus: Campus, shots):
    campus.require("the feedback")
    for student in STUDENTS:
        page = campus.log_in(student)
        body = steps.open_feedback(page).locator("body")
        if student == S1:
            expect(body).to_contain_text(COMMENT)
            expect(body).to_contain_text("1.5 / 2")
        else:
            expect(body).not_to_contain_text(COMMENT)
        shots(page, f"{student}-feedback")
        fetched = sorted((_home(student) / ASSIGNMENT / "feedback").rglob(f"{NOTEBOOK}.html"))
        assert len(fetched) == 1, fetched
        ours = campus.course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html"
        assert fetched[0].read_text() == ours.read_text(), f"{student} fetched another page than theirs"

    feedback = campus.hub.exchange / COURSE_ID / "feedback"
    for attempt, argv in {
        "list the feedback": ["ls", str(feedback)],
        "read another's feedback": ["cat", str(next((_home(S1) / ASSIGNMENT / "feedback").rglob("*.html")))],
    }.items():
        done = as_user(S2, campus.venv, argv, _home(S2))
        assert done.returncode != 0 and "Permission denied" in done.stderr, (attempt, done.stdout[:300])

"""One course round in a real browser, in order: the student's (fetch, work, validate, submit in
JupyterLab), the grader's (formgrader with the rubric, feedback through the exchange, read by the
student in JupyterLab) and the report. Each person has their own scratch HOME and Jupyter server;
the course directory is a scratch copy; the nbgrader exchange is a scratch folder."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Page, expect

from .conftest import require_chromium

require_chromium()

from . import lab, steps  # noqa: E402
from .jupyter import JupyterServer, run, scratch_env  # noqa: E402
from .steps import ANSWER, ANSWER_ID, ASSIGNMENT, COMMENT, REFERENCE  # noqa: E402

STUDENT = "ani"
_cells = steps.cells

SLOW_GRADES = """
var loadGradesNow = FormGrader.prototype.loadGrades;
FormGrader.prototype.loadGrades = function () {
    var that = this;
    this.grades = {"loaded": false};
    setTimeout(function () { loadGradesNow.call(that); }, 3000);
};
"""


@dataclass
class World:
    tmp: Path
    course: Path
    exchange: Path
    student_dir: Path
    student_env: dict
    instructor_env: dict
    servers: dict = field(default_factory=dict)
    submitted: bool = False

    def server(self, who: str) -> JupyterServer:
        if who not in self.servers:
            root, env = (
                (self.student_dir, self.student_env)
                if who == "student"
                else (self.course, self.instructor_env)
            )
            self.servers[who] = JupyterServer(root, env, self.tmp / f"jupyter-{who}.log").start()
        return self.servers[who]

    def instructor(self, *args: str):
        return run(list(args), cwd=self.course, env=self.instructor_env)

    def collect_and_grade(self) -> None:
        if not (self.course / "autograded" / STUDENT).is_dir():
            self.instructor("nbgrader", "collect", ASSIGNMENT)
            assert (self.course / "submitted" / STUDENT / ASSIGNMENT / "02_sinusoidal.ipynb").is_file()
            self.instructor("pe-course", "grade", ASSIGNMENT)


@pytest.fixture(scope="module")
def world(_course_template, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser-round")
    course = tmp / "course"
    shutil.copytree(_course_template, course)
    exchange = tmp / "exchange"
    student_dir = tmp / "home-ani" / "kuliah"
    student_dir.mkdir(parents=True)
    w = World(
        tmp,
        course,
        exchange,
        student_dir,
        scratch_env(tmp / "home-ani", STUDENT, exchange, assignment_dir=student_dir),
        scratch_env(tmp / "home-instructor", "dosen", exchange),
    )
    w.instructor("nbgrader", "release_assignment", ASSIGNMENT)
    yield w
    leftovers = {who: server.stop() for who, server in w.servers.items()}
    assert not any(leftovers.values()), (
        f"processes left running after the Jupyter servers stopped: {leftovers}"
    )


def test_student_fetches_works_validates_and_submits(world: World, page: Page, shots):
    server = world.server("student")
    lab.open_lab(page, server.url("lab"))
    lab.assignment_list(page)
    released = lab.wait_for_list(page, "released", 1)
    expect(released.first.locator(".item_name")).to_have_text(ASSIGNMENT)
    shots(page, "assignment-list-released")
    released.first.locator(".item_status button").click()  # Fetch
    fetched = lab.wait_for_list(page, "fetched", 1)
    assert (world.student_dir / ASSIGNMENT / "02_sinusoidal.ipynb").is_file()
    page.locator(f'#fetched_assignments_list a:text("{ASSIGNMENT}")').click()  # expand: its notebooks
    notebook_row = fetched.first.locator(".list_item").filter(has_text="02_sinusoidal")
    expect(notebook_row).to_be_visible()
    shots(page, "assignment-list-fetched")

    notebook_row.locator(".item_name a").click()
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")).to_contain_text("02_sinusoidal")
    expect(lab.cell_with(page, "def frequencies(")).to_be_visible(timeout=60_000)
    lab.run_all(page)
    stub_error = lab.cell_with(page, 'check_function("frequencies", frequencies)', ".jp-CodeCell").locator(
        ".jp-OutputArea-output"
    )
    expect(stub_error.first).to_contain_text("frequencies belum ditulis", timeout=120_000)  # what to do
    expect(stub_error.first).to_contain_text("[gagal] K1")  # every clause, failed
    expect(stub_error.last).to_contain_text("PublicCheckFailed")
    expect(stub_error.last).not_to_contain_text(
        "Traceback"
    )  # the message only, no traceback into public_checks
    lab.wait_idle(page)
    stub_error.first.scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "stub-error")

    page.locator(f"{lab.NOTEBOOK} jp-button.validate-button").click()
    expect(page.locator(".nbgrader-ErrorDialog")).to_have_count(1, timeout=120_000)
    expect(page.locator(".nbgrader-ErrorDialog")).to_contain_text("belum terpenuhi pada kasus publik")
    shots(page, "validate-failed")
    lab.close_dialog(page, "Error")

    reference = REFERENCE
    lab.replace_source(page, lab.cell_with(page, "def frequencies("), reference["solution_frequencies"])
    lab.replace_source(
        page, lab.cell_with(page, "def positional_encoding("), reference["solution_positional_encoding"]
    )
    answer = lab.cell_with(page, "JAWABAN ANDA DI SINI", ".jp-MarkdownCell")
    answer.dblclick()
    lab.replace_source(page, answer, ANSWER)
    page.keyboard.press("ControlOrMeta+Enter")  # render it in place (Shift+Enter would add a cell below)
    lab.save(page)
    saved = _cells(nbformat.read(world.student_dir / ASSIGNMENT / "02_sinusoidal.ipynb", as_version=4))
    assert saved["solution_frequencies"] == reference["solution_frequencies"], "typed exactly, saved to disk"
    assert saved[ANSWER_ID] == ANSWER

    lab.run_all(page)
    lab.wait_idle(page)
    for function in ("frequencies", "positional_encoding"):
        check = lab.cell_with(page, f'check_function("{function}", {function})', ".jp-CodeCell")
        expect(check.locator(".jp-OutputArea-output").first).to_contain_text(
            "Semua ketentuan lolos pada kasus publik"
        )
    expect(
        page.locator(f"{lab.NOTEBOOK} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    ).to_have_count(0)
    images = page.locator(f"{lab.NOTEBOOK} .jp-OutputArea-output img")
    released = nbformat.read(world.student_dir / ASSIGNMENT / "02_sinusoidal.ipynb", as_version=4)
    pictures = [c for c in released.cells if c.cell_type == "code" and "plt.show()" in c.source]
    expect(images).to_have_count(len(pictures))  # every picture cell drew, none fell back to its stub message
    stub_message = page.locator(f"{lab.NOTEBOOK} .jp-OutputArea-output").filter(
        has_text="Gambar ini dibuat dari"
    )
    expect(stub_message).to_have_count(0)
    heatmap = images.first
    heatmap.scroll_into_view_if_needed()
    lab.settle(page)
    assert heatmap.evaluate("img => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0")
    shots(page, "heatmap")

    # Every formula typeset by MathJax, none left as TeX or shown as a MathJax error.
    markdown = page.locator(f"{lab.NOTEBOOK} .jp-MarkdownOutput")
    expect(markdown.locator("mjx-container").first).to_be_attached()
    assert markdown.locator("mjx-container").count() > 5
    expect(markdown.locator("mjx-merror")).to_have_count(0)
    raw = [t for t in markdown.all_inner_texts() if "$$" in t or "\\frac" in t]
    assert not raw, f"formulas left as TeX: {raw}"
    formula = lab.cell_with(page, "Rumus sinus dan kosinus", ".jp-MarkdownCell")
    formula.scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "formulas")

    hint = (
        page.locator(f"{lab.NOTEBOOK} details")
        .filter(has=page.locator("summary", has_text="Petunjuk 1"))
        .first
    )
    hint.locator("summary").click()
    expect(hint).to_have_attribute("open", "")
    hint.scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "hint")

    page.locator(f"{lab.NOTEBOOK} jp-button.validate-button").click()
    expect(page.locator(".nbgrader-SuccessDialog")).to_have_count(1, timeout=120_000)
    shots(page, "validate-success")
    lab.close_dialog(page, "Success")

    steps.submit(page)
    shots(page, "submitted")
    inbound = list((world.exchange / "pe-course" / "inbound").iterdir())
    assert [p.name.split("+")[0] for p in inbound] == [STUDENT]
    world.submitted = True


NOTEBOOKS = ("01_embedding", "02_sinusoidal", "03_rotation", "04_similarity")
# Text a reader should never see in a rendered markdown cell: TeX that MathJax left alone.
RAW_TEX = r"""(() => {
    const found = [];
    for (const md of document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown')) {
        const copy = md.cloneNode(true);
        copy.querySelectorAll('code, pre, mjx-container, math').forEach(e => e.remove());
        const text = copy.textContent;
        const hit = text.match(/\$[^$\s][^$]*\$|\\(frac|sin|cos|omega|theta|sum|text|mathbf|cdot|top)\b/);
        if (hit) found.push(hit[0].slice(0, 80));
    }
    return found;
})()"""


UNFILLED_MARKDOWN = f"""[...document.querySelectorAll('{lab.NOTEBOOK} .jp-MarkdownOutput')]
    .map((md, i) => [i, md.textContent.trim()]).filter(([i, text]) => !text).map(([i]) => i)"""
BROKEN_IMAGES = f"""[...document.querySelectorAll('{lab.NOTEBOOK} .jp-RenderedMarkdown img')]
    .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"""


def test_every_released_notebook_renders_its_formulas_and_hints(world: World, page: Page, shots):
    if not (world.student_dir / ASSIGNMENT).is_dir():
        pytest.skip("needs the assignment fetched in test_student_fetches_works_validates_and_submits")
    server = world.server("student")
    for name in NOTEBOOKS:
        markdown_cells = sum(
            c.cell_type == "markdown"
            for c in nbformat.read(world.student_dir / ASSIGNMENT / f"{name}.ipynb", as_version=4).cells
        )
        lab.open_lab(page, server.url(f"lab/tree/{ASSIGNMENT}/{name}.ipynb"))
        rendered = page.locator(f"{lab.NOTEBOOK} .jp-MarkdownCell.jp-mod-rendered")
        expect(rendered).to_have_count(markdown_cells, timeout=60_000)
        markdown = page.locator(f"{lab.NOTEBOOK} .jp-MarkdownOutput")
        # a cell is marked rendered before its HTML is in (rendering is asynchronous): at load 5 the hints
        # of 01_embedding were not there yet when counted
        unfilled = lab.until_empty(page, UNFILLED_MARKDOWN, timeout_s=60)
        assert unfilled == [], f"{name}: markdown cells rendered empty: {unfilled}"
        expect(markdown.locator("mjx-container").first).to_be_attached()
        raw = lab.until_empty(page, RAW_TEX)  # MathJax typesets cell by cell
        assert raw == [], f"{name}: formulas shown as TeX source: {raw}"
        expect(markdown.locator("mjx-merror")).to_have_count(0)
        hints = page.evaluate(f"""() => {{
            const all = [...document.querySelectorAll('{lab.NOTEBOOK} details')];
            return [all.length, all.filter(d => !d.querySelector(':scope > summary')).length]; }}""")
        assert hints[0] > 0 and hints[1] == 0, f"{name}: hints (all, without a summary line): {hints}"
        broken = lab.until_empty(page, BROKEN_IMAGES)  # still loading is not broken, yet
        assert not broken, f"{name}: images in the text do not load: {broken}"
        shots(page, name)


def test_grader_grades_the_written_answer_with_the_rubric_and_the_student_reads_feedback(
    world: World, page: Page, shots
):
    if not world.submitted:
        pytest.skip("needs the submission made in test_student_fetches_works_validates_and_submits")
    world.collect_and_grade()

    server = world.server("instructor")
    grader = (
        page.context.browser.new_context(  # the grader's own browser; formgrader's API calls carry the token
            viewport={"width": 1280, "height": 900},
            extra_http_headers={"Authorization": f"token {server.token}"},
        )
    )
    student_page, page = page, grader.new_page()

    def slow_server(route):
        # As on a loaded server: formgrader's boxes show seconds before its grades arrive and bind them.
        # (The delay is in the page: a route handler that sleeps would stop this test's own steps too.)
        script = route.fetch().text()
        route.fulfill(body=script + SLOW_GRADES, content_type="application/javascript")

    page.route("**/formgrader/static/js/formgrade.js*", slow_server)
    page.goto(server.url(f"formgrader/gradebook/{ASSIGNMENT}/02_sinusoidal"))
    submission = page.locator("a", has_text="Submission #1")
    expect(submission).to_be_visible(timeout=60_000)
    expect(page.locator("td.needs-manual-grade")).to_have_attribute("data-search", "needs manual grade")
    shots(page, "formgrader-submissions")
    submission.click()

    score = page.locator(f"input.score#{ANSWER_ID}")
    expect(score).to_be_visible(timeout=60_000)
    answer_cell = page.locator(".cell").filter(has=score)
    expect(answer_cell).to_contain_text("PE_sin(0) adalah vektor nol")
    # The rubric is the cell right above the answer (the locked question cell, restored at autograde).
    rubric_cell = answer_cell.locator("xpath=preceding-sibling::div[contains(@class, 'cell')][1]")
    expect(rubric_cell).to_contain_text("Rubrik penilaian")
    expect(rubric_cell.get_by_text("Rubrik penilaian")).to_be_visible()
    expect(rubric_cell.locator("table")).to_be_visible()  # criteria with their points
    # Formulas rendered (MathML, built by the server: formgrader's MathJax would come from a CDN).
    expect(rubric_cell.locator("math").first).to_be_visible()
    assert "\\sin" not in rubric_cell.inner_text(), "the rubric's formulas are shown as TeX source"
    rubric_cell.scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "formgrader-rubric-and-answer")

    steps.grade_written_answer(page)
    answer_cell.scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "formgrader-scored")

    from pe_course.course import Course

    def saved():
        with Course(world.course).gradebook() as gb:
            grade = gb.find_grade(ANSWER_ID, "02_sinusoidal", ASSIGNMENT, STUDENT)
            comment_row = gb.find_comment(ANSWER_ID, "02_sinusoidal", ASSIGNMENT, STUDENT)
            return grade.manual_score, comment_row.manual_comment

    for _ in range(50):
        if saved() == (1.5, COMMENT):
            break
        page.wait_for_timeout(200)
    assert saved() == (1.5, COMMENT), "formgrader saved the points and the comment in the gradebook"
    page.reload()
    expect(page.locator(f"input.score#{ANSWER_ID}")).to_have_value("1.5")

    grader.close()
    world.instructor("pe-course", "feedback", ASSIGNMENT, "--exchange")

    page = student_page
    student = world.server("student")
    lab.open_lab(page, student.url("lab"))
    lab.assignment_list(page)
    submitted = lab.wait_for_list(page, "submitted", 1)
    fetch = submitted.first.locator('.item_status button:text("Fetch Feedback")')
    expect(fetch).to_be_visible(timeout=60_000)
    shots(page, "feedback-available")
    fetch.click()
    view = page.locator("#submitted_assignments_list a", has_text="view feedback")
    expect(view).to_be_visible(timeout=60_000)
    shots(page, "feedback-fetched")
    view.first.click()  # the file browser goes to the feedback folder
    item = page.locator(".jp-DirListing-item", has_text="02_sinusoidal.html")
    expect(item).to_be_visible()
    item.dblclick()
    feedback = page.frame_locator("#jp-main-dock-panel .jp-HTMLViewer:not(.lm-mod-hidden) iframe")
    body = feedback.locator("body")
    expect(body).to_contain_text("Penilaian otomatis", timeout=60_000)  # the graders' messages, in Indonesian
    expect(body).to_contain_text("Penilaian otomatis `positional_encoding`: 3 / 3 poin".replace("`", ""))
    expect(body).to_contain_text(COMMENT)
    expect(body).to_contain_text("1.5 / 2")
    expect(body).to_contain_text("Rubrik penilaian")  # shown with the feedback, on purpose (conventions)
    feedback.get_by_text(COMMENT).scroll_into_view_if_needed()
    lab.settle(page)
    shots(page, "feedback-opened")

    html = next((world.student_dir / ASSIGNMENT).parent.rglob("feedback/*/02_sinusoidal.html")).read_text()
    for hidden in (
        "BEGIN HIDDEN TESTS",
        "BEGIN SOLUTION",
        "grading.json",
        "graders/",
        "02_sinusoidal/checks.py",
    ):
        assert hidden not in html, f"feedback shows {hidden!r}"


def test_report_renders_cleanly_with_working_images_and_links_at_desktop_and_phone_widths(
    world: World, page: Page, shots
):
    if world.submitted:
        world.collect_and_grade()
    world.instructor("pe-course", "report", ASSIGNMENT)
    report = world.course / "reports" / ASSIGNMENT / "report.html"
    problems: list[str] = []
    page.on(
        "console",
        lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"request failed: {req.url[:80]} {req.failure}"))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")

    images = page.locator("img")
    assert images.count() > 0
    sizes = images.evaluate_all("imgs => imgs.map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight])")
    broken = [alt for alt, complete, width, height in sizes if not (complete and width > 0 and height > 0)]
    assert not broken, f"images not loaded: {broken}"

    links = page.locator("a[href^='#']")
    targets = links.evaluate_all("as => as.map(a => decodeURIComponent(a.getAttribute('href').slice(1)))")
    assert targets, "the report has in-page navigation"
    for target in targets:
        assert page.locator(f"[id='{target}']").count() == 1, f"link #{target} has no section to land on"
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for i, target in enumerate(targets):
            page.evaluate("window.scrollTo(0, 0)")
            links.nth(i).click()
            page.wait_for_function("id => location.hash === '#' + id", arg=target)
            landed = page.evaluate(
                """id => { const r = document.getElementById(id).getBoundingClientRect();
                const bottom = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
                return Math.abs(r.top) < 4 || (bottom && r.top >= 0 && r.top < window.innerHeight); }""",
                target,
            )
            assert landed, f"at {width} px, link #{target} does not bring its section into view"
        page.evaluate("window.scrollTo(0, 0)")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"at {width} px the page scrolls sideways by {overflow} px"
        smallest = page.evaluate("""() => Math.min(...[...document.querySelectorAll('p, li, td, th')]
            .filter(e => e.textContent.trim()).map(e => parseFloat(getComputedStyle(e).fontSize)))""")
        assert smallest >= 11, f"at {width} px some text is {smallest} px"
        shots(page, f"report-{width}px", full_page=False)
    assert not problems, problems

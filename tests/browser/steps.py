"""The steps of a course round that the single-host round (test_round.py) and the JupyterHub round
(test_hub.py) both take in the browser: what a student does in the Assignment List and the notebook,
and what a grader does in formgrader. Each step checks what the person would see."""

from __future__ import annotations

import nbformat
from conftest import reference_nb
from playwright.sync_api import Frame, FrameLocator, Locator, Page, expect

from . import lab

ASSIGNMENT = "positional-encoding"
NOTEBOOK = "02_sinusoidal"
ANSWER = (
    "1. Tidak: PE_sin(0) adalah vektor nol, jadi M · PE_sin(0) = 0 untuk matriks apa pun, padahal "
    "PE_sin(1) bukan nol.\n2. Tidak: sin a · sin b = ½[cos(a − b) − cos(a + b)], jadi hasilnya juga "
    "bergantung pada p + q, bukan hanya pada offset p − q."
)
COMMENT = "Bagian 1 tepat. Bagian 2: alasannya benar, tetapi sertakan contoh angka yang Anda hitung (misalnya d_model = 8)."


def cells(nb) -> dict[str, str]:
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells if "nbgrader" in c.metadata}


REFERENCE = cells(reference_nb(NOTEBOOK))
# The written answer of 02_sinusoidal (its grade_id follows the question: answer_<name>).
(ANSWER_ID,) = [gid for gid in REFERENCE if gid.startswith("answer_")]


def fetch(page: Page) -> Locator:
    """Assignment List → Fetch the released assignment; its row in the fetched list, expanded."""
    lab.assignment_list(page)
    released = lab.wait_for_list(page, "released", 1)
    expect(released.first.locator(".item_name")).to_have_text(ASSIGNMENT)
    released.first.locator(".item_status button").click()  # Fetch
    fetched = lab.wait_for_list(page, "fetched", 1)
    page.locator(f'#fetched_assignments_list a:text("{ASSIGNMENT}")').click()  # expand: its notebooks
    return fetched


def open_notebook(page: Page, fetched: Locator, name: str = NOTEBOOK) -> None:
    row = fetched.first.locator(".list_item").filter(has_text=name)
    expect(row).to_be_visible()
    row.locator(".item_name a").click()
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")).to_contain_text(name)
    expect(lab.cell_with(page, "def frequencies(")).to_be_visible(timeout=60_000)


def write_solution(page: Page, functions: tuple[str, ...], answer: str | None = ANSWER) -> None:
    """Type the reference solution of ``functions`` (and the written answer) into the open notebook."""
    for function in functions:
        lab.replace_source(page, lab.cell_with(page, f"def {function}("), REFERENCE[f"solution_{function}"])
    if answer is not None:
        cell = lab.cell_with(page, "JAWABAN ANDA DI SINI", ".jp-MarkdownCell")
        cell.dblclick()
        lab.replace_source(page, cell, answer)
        page.keyboard.press("ControlOrMeta+Enter")  # render it in place (Shift+Enter would add a cell below)
    lab.save(page)


def validate(page: Page, passes: bool) -> None:
    page.locator(f"{lab.NOTEBOOK} jp-button.validate-button").click()
    kind = "Success" if passes else "Error"
    expect(page.locator(f".nbgrader-{kind}Dialog")).to_have_count(1, timeout=120_000)
    if not passes:
        expect(page.locator(".nbgrader-ErrorDialog")).to_contain_text("belum terpenuhi pada kasus publik")
    lab.close_dialog(page, kind)


def submit(page: Page) -> None:
    lab.show_tab(page, "Assignments")
    fetched = lab.wait_for_list(page, "fetched", 1)
    fetched.first.locator('.item_status button:text("Submit")').click()
    submitted = lab.wait_for_list(page, "submitted", 1)
    expect(submitted.first.locator(".item_name").first).to_have_text(ASSIGNMENT)


# formgrader binds its score and comment boxes only once it has fetched the submission's grades and
# comments (formgrade.js, loadGrades/loadComments), and binding writes the stored value into the box:
# points typed into a box that is visible but not bound yet are wiped and never saved.
# (Not `formgrader.loaded`: init() stops before setting it where MathJax, from a CDN, cannot load.)
FORMGRADER_BOUND = (
    "() => typeof formgrader !== 'undefined'"
    " && formgrader.grades && formgrader.grades.loaded && formgrader.comments && formgrader.comments.loaded"
)


def grade_written_answer(page: Page | Frame, score: str = "1.5", comment: str = COMMENT) -> Locator:
    """On a submission's page of formgrader, once formgrader has bound its boxes: give the written answer
    its points and a comment; the answer's cell (under the rubric)."""
    box = page.locator(f"input.score#{ANSWER_ID}")
    expect(box).to_be_visible(timeout=60_000)
    answer_cell = page.locator(".cell").filter(has=box)
    expect(answer_cell).to_contain_text("PE_sin(0) adalah vektor nol")
    page.wait_for_function(FORMGRADER_BOUND, timeout=60_000)
    box.fill(score)
    box.press("Tab")
    text = page.locator(f"textarea.comment#{ANSWER_ID}-comment")
    text.fill(comment)
    text.press("Tab")
    return answer_cell


def open_feedback(page: Page) -> FrameLocator:
    """Assignment List → Fetch Feedback → view feedback → the notebook's page, opened in JupyterLab."""
    lab.assignment_list(page)
    submitted = lab.wait_for_list(page, "submitted", 1)
    fetch_button = submitted.first.locator('.item_status button:text("Fetch Feedback")')
    expect(fetch_button).to_be_visible(timeout=60_000)
    fetch_button.click()
    view = page.locator("#submitted_assignments_list a", has_text="view feedback")
    expect(view).to_be_visible(timeout=60_000)
    view.first.click()  # the file browser goes to the feedback folder
    item = page.locator(".jp-DirListing-item", has_text=f"{NOTEBOOK}.html")
    expect(item).to_be_visible()
    item.dblclick()
    feedback = page.frame_locator("#jp-main-dock-panel .jp-HTMLViewer:not(.lm-mod-hidden) iframe")
    expect(feedback.locator("body")).to_contain_text("Penilaian otomatis", timeout=60_000)
    return feedback


def saved_notebook(path) -> dict[str, str]:
    return cells(nbformat.read(path, as_version=4))

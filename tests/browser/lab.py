"""What a person does in JupyterLab, in Playwright terms (selectors as in nbgrader's own UI tests,
nbgrader/tests/ui-tests/*.spec.ts)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from playwright.sync_api import Locator, Page, expect

NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def open_lab(page: Page, url: str) -> None:
    """JupyterLab at ``url``; for ``…/lab/tree/<file>``, once that file's tab is the current one. The
    workspace first restores the tabs of the last visit, and the one current then can be the visible
    notebook for a moment. (A full-suite run at 9e4220b failed so, by its figures: 15 rendered markdown
    cells counted, as 02_sinusoidal, restored, and 01_embedding, opened, both have, then no hint found.)"""
    page.goto(url)
    page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=90_000)
    expect(page.locator("#jp-menu-panel")).to_be_visible()
    path = urlsplit(url).path
    if "/lab/tree/" in path:
        name = unquote(path.rpartition("/")[2])
        current = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
        expect(current).to_contain_text(name, timeout=60_000)


def menu(page: Page, top: str, command: str) -> None:
    """Click a main-menu entry by its command id (e.g. Run → notebook:run-all-cells)."""
    page.locator(f'#jp-menu-panel div.lm-MenuBar-itemLabel:text-is("{top}")').click()
    page.locator(f'.lm-Menu li[data-command="{command}"]').click()


def assignment_list(page: Page) -> None:
    menu(page, "Nbgrader", "nbgrader:open-assignment-list")
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")).to_contain_text("Assignments")


def wait_for_list(page: Page, name: str, rows: int) -> Locator:
    """The released/fetched/submitted list, loaded, with this many rows (nbgrader's waitForList)."""
    for state in ("loading", "placeholder", "error"):
        expect(page.locator(f"#{name}_assignments_list_{state}")).not_to_be_visible(timeout=60_000)
    found = page.locator(f"#{name}_assignments_list > .list_item")
    expect(found).to_have_count(rows, timeout=60_000)
    return found


def show_tab(page: Page, label: str) -> None:
    page.locator(f'#jp-main-dock-panel .lm-TabBar-tab:has-text("{label}")').first.click()


def cell_with(page: Page, text: str, kind: str = "") -> Locator:
    """The notebook cell whose source or rendered text contains ``text``."""
    return page.locator(f"{NOTEBOOK} .jp-Cell{kind}").filter(has_text=text).first


def run_all(page: Page) -> None:
    expect(page.locator("#jp-main-statusbar").get_by_text("| Idle")).to_be_visible(
        timeout=60_000
    )  # kernel up
    menu(page, "Run", "runmenu:run-all")


def wait_idle(page: Page, timeout: float = 120_000) -> None:
    """No cell waiting or running ([*]) and the kernel idle."""
    expect(page.locator(f"{NOTEBOOK} .jp-InputPrompt").filter(has_text="[*]")).to_have_count(
        0, timeout=timeout
    )
    expect(page.locator(".jp-Notebook-ExecutionIndicator").first).to_have_attribute(
        "data-status", "idle", timeout=timeout
    )


def replace_source(page: Page, cell: Locator, text: str) -> None:
    """Select everything in the cell's editor and type ``text`` in its place (as one insertion)."""
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)
    page.keyboard.press("Escape")


def save(page: Page, attempts: int = 3) -> None:
    """Ctrl-S until the notebook's tab is no longer dirty: on a busy machine a key pressed while the
    editor was still taking the last insertion can be lost (seen in the JupyterHub round, the tab still
    dirty 20 s later); saving again is harmless."""
    dirty = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current.jp-mod-dirty")
    for attempt in range(attempts):
        page.keyboard.press("ControlOrMeta+s")
        try:
            expect(dirty).to_have_count(0)
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise


def close_dialog(page: Page, kind: str) -> None:
    page.locator(f".nbgrader-{kind}Dialog button.jp-Dialog-button").last.click()
    expect(page.locator(f".nbgrader-{kind}Dialog")).to_have_count(0)


def settle(page: Page) -> None:
    """Let the browser paint what was just scrolled into view (cells off screen are not rendered)."""
    page.wait_for_timeout(400)


def until_empty(page: Page, script: str, timeout_s: float = 20) -> list:
    """Evaluate ``script`` until it returns an empty list (or the time is up); its last result."""
    import time

    deadline = time.monotonic() + timeout_s
    while (found := page.evaluate(script)) and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    return found

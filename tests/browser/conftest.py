"""Browser tests: JupyterLab + nbgrader's extensions + formgrader + the report, driven by Playwright
on Debian's chromium (launched by its path; Playwright's own browser downloads are never used).

Without chromium the tests here are skipped with one line saying what to install
(:func:`require_chromium` at the top of each test module; all tests are in one module). Screenshots of every
step land in ``tests/browser/artifacts/`` (git-ignored)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("PE_COURSE_CHROMIUM", "/usr/bin/chromium")
# A shared 2-core CI machine can be slow to paint: wait up to 20 s (not Playwright's 5 s) for what should appear.
EXPECT_TIMEOUT_MS = 20_000
ARTIFACTS = Path(__file__).parent / "artifacts"
MISSING = (
    f"no chromium at {CHROMIUM}: install it with `apt-get install chromium` "
    "(or set PE_COURSE_CHROMIUM to a Chromium binary) to run the browser tests"
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)


def require_chromium() -> None:
    """Skip the calling test module (one line in the summary) when there is no chromium to drive."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(MISSING, allow_module_level=True)
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    # *.localhost to the loopback, whatever the resolver says: the hub's users and service each have
    # their own origin there (tests/browser/hub.py)
    resolve = "--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP localhost 127.0.0.1"
    args = [*browser_type_launch_args.get("args", []), resolve]
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": args}


# pytest-playwright keeps Playwright (its event loop) and the browser for the whole session, and while
# it runs asyncio.run() fails in every later test of the suite. Here they live for one module only.
@pytest.fixture(scope="module")
def playwright(_pw_api_request_contexts):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    if _pw_api_request_contexts:
        _pw_api_request_contexts.instrument(pw)
    yield pw
    pw.stop()


@pytest.fixture(scope="module")
def browser_type(playwright, browser_name):
    return getattr(playwright, browser_name)


@pytest.fixture(scope="module")
def launch_browser(browser_type_launch_args, browser_type):
    return lambda **kwargs: browser_type.launch(**{**browser_type_launch_args, **kwargs})


@pytest.fixture(scope="module")
def browser(launch_browser):
    browser = launch_browser()
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def browser_context_args():
    return {"viewport": {"width": 1280, "height": 900}, "locale": "id-ID"}


class Shots:
    """Numbered screenshots of one test's steps: artifacts/<test>/NN-<step>.png."""

    def __init__(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.folder, self.count = folder, 0

    def __call__(self, page_or_locator, step: str, **kwargs) -> Path:
        self.count += 1
        path = self.folder / f"{self.count:02d}-{step}.png"
        page_or_locator.screenshot(path=str(path), **kwargs)
        return path


@pytest.fixture
def shots(request) -> Shots:
    return Shots(ARTIFACTS / re.sub(r"\W+", "-", request.node.name).strip("-"))

"""Browser tests: JupyterLab + nbgrader's extensions + formgrader + the report, driven by Playwright
on Debian's chromium (launched by its path; Playwright's own browser downloads are never used).

Without chromium every test here is skipped with one line saying what to install. Screenshots of every
step land in ``tests/browser/artifacts/`` (git-ignored)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("PE_COURSE_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"
MISSING = (f"no chromium at {CHROMIUM}: install it with `apt-get install chromium` "
           "(or set PE_COURSE_CHROMIUM to a Chromium binary) to run the browser tests")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(item.fspath).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def _chromium_installed():
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(MISSING)  # raised here, so -ra reports it once for every browser test


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}, "locale": "id-ID"}


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

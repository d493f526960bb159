"""Types: mypy on the package and the bench scripts, as ``pyproject.toml`` configures it (``mypy`` alone runs the
same check). A test, so that under pytest-xdist it runs beside the others instead of before them: 20-30 s
of one core on a fresh clone, while the other core waited."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO


@pytest.mark.slow
def test_mypy_finds_no_type_errors():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "Success: no issues found" in proc.stdout, proc.stdout

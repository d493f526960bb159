"""Real unix users for the tests of a shared server and a JupyterHub (issue 32): made with ``useradd``
(root only), running pe-course, nbgrader and Jupyter from a venv they can read.

The venv is made from Debian's ``/usr/bin/python3`` with this checkout installed (the default ``python3``
here lives under ``/root``, which they cannot read); it is made once and kept in ``/var/tmp``
(``PE_COURSE_USER_VENV`` names another)."""

from __future__ import annotations

import hashlib
import os
import pwd
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

INSTRUCTOR, TA = "pe-instructor", "pe-ta"
STUDENTS = ("pe-student1", "pe-student2", "pe-student3")


def ensure_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True, capture_output=True)
        return pwd.getpwnam(name)


def users_venv() -> Path:
    """A venv ordinary users can run, with this checkout installed (made once, ~2 minutes); the calling
    test is skipped, with the reason, where it cannot be made."""
    digest = hashlib.sha256(str(REPO).encode()).hexdigest()[:8]
    path = Path(os.environ.get("PE_COURSE_USER_VENV") or f"/var/tmp/pe-course-user-venv-{digest}")
    python = path / "bin" / "python"
    if python.exists():  # a fresh machine has none yet
        probe = subprocess.run(
            [str(python), "-c", "import pe_course, jupyterhub; print(pe_course.__file__)"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0 and probe.stdout.strip().startswith(str(REPO / "src")):
            return path
    base = Path("/usr/bin/python3")
    if not base.exists():
        pytest.skip("no /usr/bin/python3 for a venv ordinary users can run")
    made = subprocess.run([str(base), "-m", "venv", "--clear", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a venv with {base} (python3-venv?): {made.stderr.strip()[-200:]}")
    # Debian's pip (23.0) once failed inside its resolver here (packaging's Version(None)); a current pip
    # does not, and a second try covers a registry that failed once
    pip_cmd = [str(path / "bin" / "pip"), "install", "-q"]
    subprocess.run([*pip_cmd, "--upgrade", "pip"], capture_output=True, text=True, timeout=600, check=False)
    for _ in range(2):
        pip = subprocess.run(
            [*pip_cmd, "-e", f"{REPO}[test]"], capture_output=True, text=True, timeout=1200, check=False
        )
        if pip.returncode == 0:
            break
    if pip.returncode != 0:
        pytest.skip(f"cannot install pe-course into {path}: {pip.stderr.strip()[-300:]}")
    return path


def as_user(user: str, venv: Path, argv: list[str], cwd: Path, timeout: float = 900):
    """``argv`` run as ``user``, with a login's environment and the venv on PATH (nbgrader runs
    ``alembic`` from PATH)."""
    env = [f"HOME=/home/{user}", f"PATH={venv}/bin:/usr/bin:/bin", "LANG=C.UTF-8", "COLUMNS=250"]
    return subprocess.run(
        ["runuser", "-u", user, "--", "env", "-i", *env, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )

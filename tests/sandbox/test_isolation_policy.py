"""Grading fails closed: without working bubblewrap no student code runs unless the instructor opts in.

The machine without bubblewrap is simulated the way it differs from this one: a PATH on which
``bwrap`` is absent, or present but unable to create its namespaces (user namespaces off). Everything
else is real: ``pe-course grade``, ``nbgrader autograde`` with the course's config, ``pytest graders``.
"""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path

import pytest
from conftest import REPO, path_without_bwrap, reference_nb, release_nb, requires_bwrap
from test_hostile import hostile_files_code, wrong_nb

from pe_course.sandbox import landlock

MACHINES = [pytest.param(False, id="no-bwrap"), pytest.param(True, id="bwrap-without-userns")]
requires_landlock = pytest.mark.skipif(not landlock.abi(), reason="the kernel has no Landlock")


def run(cwd: Path, argv: list[str], path: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path, "COLUMNS": "200", "PYTHONWARNINGS": "ignore"}
    env.pop("PE_COURSE_NO_BWRAP", None)
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]


def gradebook_submissions(course) -> list[str]:
    with course.course.gradebook() as gb:
        return [s.student.id for s in gb.find_assignment("positional-encoding").submissions]


def exe(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


@pytest.mark.parametrize("broken", MACHINES)
def test_grade_refuses_in_one_line_and_writes_nothing(course_copy, tmp_path, broken):
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    misplaced = course_copy.root / "submitted" / "ani" / "02_sinusoidal.ipynb"  # tidy would move it
    misplaced.write_text(json.dumps(release_nb("02_sinusoidal")), encoding="utf-8")
    before = sorted(str(p.relative_to(course_copy.root)) for p in course_copy.root.rglob("*"))
    proc = run(
        course_copy.root,
        [exe("pe-course"), "grade", "positional-encoding"],
        path_without_bwrap(tmp_path / "bin", broken),
    )
    out = lines(proc)
    assert proc.returncode == 2, out
    assert len(out) == 1 and "Traceback" not in proc.stderr, out
    assert out[0].startswith("Refusing to run student code: ") and "--unisolated" in out[0], out
    if broken:
        assert "cannot create its namespaces" in out[0] and "user namespaces" in out[0], out
    else:
        assert "bubblewrap (bwrap) is not installed" in out[0] and "apt-get install -y bubblewrap" in out[0]
    assert gradebook_submissions(course_copy) == []
    assert not (course_copy.root / "autograded").exists() or not any(
        (course_copy.root / "autograded").iterdir()
    )
    assert not (course_copy.root / "feedback").exists() and not (course_copy.root / ".pe-course").exists()
    assert sorted(str(p.relative_to(course_copy.root)) for p in course_copy.root.rglob("*")) == before


def test_plain_nbgrader_autograde_refuses_before_writing(course_copy, tmp_path):
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    proc = run(
        course_copy.root,
        [exe("nbgrader"), "autograde", "positional-encoding"],
        path_without_bwrap(tmp_path / "bin"),
    )
    out = lines(proc)
    assert proc.returncode != 0
    assert out == [out[0]] and "Traceback" not in proc.stderr, out
    assert "ERROR" in out[0] and "Refusing to run student code: bubblewrap (bwrap) is not installed" in out[0]
    assert gradebook_submissions(course_copy) == []
    assert not (course_copy.root / "autograded" / "ani").exists()


def test_without_a_resource_group_every_path_refuses_in_one_line(course_copy, monkeypatch):
    """Fail closed on resource groups too (issue 32): with none to be had (switched off here with
    PE_COURSE_NO_CGROUPS), pe-course grade and plain nbgrader autograde refuse before writing, naming
    the fix and the opt-out."""
    monkeypatch.setenv("PE_COURSE_NO_CGROUPS", "1")
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    path = os.environ["PATH"]
    proc = run(course_copy.root, [exe("pe-course"), "grade", "positional-encoding"], path)
    out = lines(proc)
    assert proc.returncode == 2 and len(out) == 1 and "Traceback" not in proc.stderr, out
    assert out[0].startswith("Refusing to run student code: no resource group"), out
    assert "control group" in out[0] and "--without-resource-groups" in out[0], out
    proc = run(course_copy.root, [exe("nbgrader"), "autograde", "positional-encoding"], path)
    out = lines(proc)
    assert proc.returncode != 0 and out == [out[0]] and "Traceback" not in proc.stderr, out
    assert "ERROR" in out[0] and "Refusing to run student code: no resource group" in out[0], out
    assert gradebook_submissions(course_copy) == []
    assert not (course_copy.root / "autograded" / "ani").exists()


def test_pytest_graders_refuses_a_submission_and_runs_the_reference_saying_so(tmp_path):
    path = path_without_bwrap(tmp_path / "bin")
    submission = REPO / "release" / "positional-encoding" / "01_embedding.ipynb"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(REPO / "graders")]
    refused = run(REPO, [*command, "--submission", str(submission)], path)
    assert refused.returncode == 4, refused.stdout + refused.stderr  # pytest's usage error
    assert "Refusing to run student code: bubblewrap (bwrap) is not installed" in refused.stderr
    assert "Traceback" not in refused.stderr and "passed" not in refused.stdout
    # the reference solutions are the project's own code: collected and headed by the isolation line
    listed = run(REPO, [*command, "--collect-only", "-k", "one_hot"], path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "pe-course sandbox: NOT ISOLATED" in listed.stdout and "test_check" in listed.stdout
    # with the opt-in a submission is graded (its stubs fail every check), not refused
    opted = run(
        REPO,
        [*command, "--submission", str(submission), "--unisolated", "-q", "-k", "one_hot", "-x"],
        path,
    )
    assert opted.returncode == 1 and "failed" in opted.stdout, opted.stdout + opted.stderr


@requires_landlock
def test_the_opt_in_grades_says_so_everywhere_and_keeps_the_machine_safe(course_copy, tmp_path):
    """--unisolated grades; every record, the summary and the report say it was not isolated; the theft
    and persistence attacks of the hostile tests earn nothing and leave nothing (Landlock)."""
    token = f"pe-hostile-{uuid.uuid4().hex}"
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    course_copy.submit("eve", {"01_embedding": wrong_nb(hostile_files_code(course_copy.root, token))})
    before = {p: p.stat().st_mtime_ns for p in (course_copy.root / "source").rglob("*") if p.is_file()}
    path = path_without_bwrap(tmp_path / "bin")
    proc = run(course_copy.root, [exe("pe-course"), "grade", "positional-encoding", "--unisolated"], path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert out.lstrip().startswith(
        "NOT ISOLATED: running student code (trusted code only!) without bubblewrap"
    ), out
    assert "Landlock ABI" in out and "2 students were graded WITHOUT isolation" in out
    for student in ("ani", "eve"):
        record = course_copy.record(student, "01_embedding")
        assert record["isolation"].startswith("NOT ISOLATED (opted in for trusted code"), record["isolation"]
        assert re.search(rf"│ {student} .*│ NOT ISOLATED", out), out  # its line of the summary's table
    scores = course_copy.scores()
    assert scores[("ani", "01_embedding", "test_embed")] == 3.0
    assert scores[("eve", "01_embedding", "test_embed")] == 2.25  # the wrong embed's own score: no theft
    # persistence: nothing in the Python installation, the course or /tmp
    dirs = {*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"]}
    for d in map(Path, dirs):
        assert not (d / f"zz-{token}.pth").exists(), d
        assert token not in (
            (d / "sitecustomize.py").read_text(errors="replace") if (d / "sitecustomize.py").exists() else ""
        )
    assert not (Path("/tmp") / token).exists()
    for folder in (course_copy.root, course_copy.root / "graders", REPO, REPO / "graders"):
        conftest = folder / "conftest.py"
        assert not (conftest.exists() and token in conftest.read_text(errors="replace")), conftest
    assert {
        p: p.stat().st_mtime_ns for p in (course_copy.root / "source").rglob("*") if p.is_file()
    } == before
    report = run(course_copy.root, [exe("pe-course"), "report", "positional-encoding"], path)
    assert report.returncode == 0, report.stdout + report.stderr
    html = (course_copy.root / "reports" / "positional-encoding" / "report.html").read_text(encoding="utf-8")
    assert 'id="unisolated"' in html and "2 students were graded WITHOUT isolation" in html


@requires_bwrap
def test_with_bubblewrap_the_opt_in_changes_nothing(course_copy):
    """--unisolated only permits running without bubblewrap: where it works it is used."""
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    proc = run(
        course_copy.root,
        [exe("pe-course"), "grade", "positional-encoding", "--unisolated"],
        os.environ["PATH"],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert course_copy.record("ani", "01_embedding")["isolation"].startswith("bubblewrap:")
    assert "NOT ISOLATED" not in proc.stdout


def test_help_names_the_opt_in_as_trusted_code_only():
    proc = subprocess.run([exe("pe-course"), "grade", "--help"], capture_output=True, text=True, check=False)
    assert "--unisolated" in proc.stdout and "TRUSTED CODE ONLY" in " ".join(proc.stdout.split())


def test_build_runs_the_projects_own_code_without_bubblewrap_and_says_so_first(course_copy, tmp_path):
    """Built on the toy assignment of tests/fixtures/course (the same build, a quarter of the work)."""
    import shutil

    for folder in ("source", "graders"):
        shutil.copytree(
            REPO / "tests" / "fixtures" / "course" / folder, course_copy.root / folder, dirs_exist_ok=True
        )
    proc = run(
        course_copy.root,
        [exe("pe-course"), "build", "toy-attention"],
        path_without_bwrap(tmp_path / "bin", broken=True),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    first = proc.stdout.splitlines()[0]
    assert first.startswith(
        "NOT ISOLATED: running this project's own reference solutions, stubs and misconceptions without "
        "bubblewrap"
    ), first
    assert "cannot create its namespaces" in proc.stdout and "Self-validation passed" in proc.stdout

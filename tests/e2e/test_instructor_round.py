"""The instructor's round around automatic grading, as docs/instructor-guide.md tells it: formgrader,
feedback after manual grading (offline formulas, only what students should get, per-student LMS zips), a
fresh clone's empty gradebook, and empty intake. Real nbgrader, real Jupyter server, real CLI."""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import reference_nb

pytestmark = pytest.mark.slow
PE_COURSE = str(Path(sys.executable).with_name("pe-course"))


def pe_course(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PE_COURSE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )


def test_formgrader_command_serves_the_formgrader_and_stops_cleanly(course_copy):
    proc = subprocess.Popen(
        [PE_COURSE, "formgrader"],
        cwd=course_copy.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        url = next(line.strip() for line in proc.stdout if line.startswith("http://127.0.0.1:"))
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        deadline = time.monotonic() + 60
        while True:
            try:
                page = opener.open(url, timeout=10)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        assert page.status == 200 and page.url.endswith("/formgrader/manage_assignments")
        assert "formgrade" in page.read().decode()
        base = url.split("/formgrader")[0]
        assignments = json.loads(opener.open(f"{base}/formgrader/api/assignments", timeout=10).read())
        assert [a["name"] for a in assignments] == ["positional-encoding"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    assert (
        subprocess.run(["pgrep", "-f", f"root_dir={course_copy.root}"], capture_output=True).returncode == 1
    )


def test_feedback_after_manual_grading_carries_the_written_score_offline_and_zipped(course_copy):
    nb = reference_nb("01_embedding")
    course_copy.submit("ani", {"01_embedding": nb})
    (course_copy.root / "submitted" / "ani" / "positional-encoding" / "catatan-pribadi.pdf").write_bytes(
        b"%PDF"
    )
    graded = pe_course(course_copy.root, "grade", "positional-encoding")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    with course_copy.course.gradebook() as gb:  # what a grader does in formgrader
        grade = gb.find_grade("answer_untrained_positions", "01_embedding", "positional-encoding", "ani")
        grade.manual_score = 1.5
        gb.db.commit()
    proc = pe_course(course_copy.root, "feedback", "positional-encoding")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = course_copy.root / "feedback" / "ani" / "positional-encoding"
    assert sorted(p.name for p in folder.iterdir()) == ["01_embedding.html"], "only the pages students get"
    html = (folder / "01_embedding.html").read_text(encoding="utf-8")
    assert "1.5 / 2" in html, "the written answer's manual score is in the feedback"
    assert "<math" in html and "E_\\text{tok}" not in html, "formulas rendered at build time (offline)"
    with zipfile.ZipFile(course_copy.root / "feedback-zips" / "positional-encoding" / "ani.zip") as zf:
        assert zf.namelist() == ["positional-encoding/01_embedding.html"]


def test_fresh_clone_without_gradebook_adds_the_assignment_instead_of_a_traceback(course_copy):
    (course_copy.root / "gradebook.db").unlink()
    report = pe_course(course_copy.root, "report", "positional-encoding")
    assert report.returncode == 0, report.stdout + report.stderr
    assert "Traceback" not in report.stdout + report.stderr
    assert "adding it from source/" in report.stdout


def test_empty_intake_is_one_clear_line_and_a_failure(course_copy):
    (course_copy.root / "submitted").mkdir(exist_ok=True)
    proc = pe_course(course_copy.root, "grade", "positional-encoding")
    assert proc.returncode == 2
    assert "No submissions" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


SLOW_EMBED = "import time\ntime.sleep(8)\n"  # a top-level cell that keeps a worker busy for a while


def _workers(pid: int) -> list[int]:
    """The worker processes (multiprocessing's ``spawn_main``) that ``pid`` started."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid and b"spawn_main" in stat.with_name("cmdline").read_bytes():
                out.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return out


def _sigint_held(pid: int) -> bool:
    """Whether SIGINT is blocked or ignored in process ``pid`` (its /proc status masks)."""
    fields = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    bit = 1 << (signal.SIGINT - 1)
    return bool((int(fields["SigBlk"], 16) | int(fields["SigIgn"], 16)) & bit)


def _wait_for(moment: Callable[[], bool], proc: subprocess.Popen, what: str, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while not moment():
        assert proc.poll() is None, f"the round ended before {what}: {proc.communicate()[0]}"
        assert time.monotonic() < deadline, f"no {what} after {limit:g} s"
        time.sleep(0.005)


@pytest.mark.parametrize(
    ("how", "moment"),
    [("SIGTERM", "in-sandboxes"), ("Ctrl-C", "in-sandboxes"), ("Ctrl-C", "first-worker-starts")],
    ids=["SIGTERM", "Ctrl-C", "Ctrl-C-while-workers-start"],
)
def test_interrupting_a_round_stops_everything_and_the_next_run_goes_on(course_copy, how, moment, tmp_path):
    """Interrupted when both workers are inside sandboxes, or as the first worker process starts (it is
    still importing Python: a Ctrl-C there printed that worker's traceback from multiprocessing's
    spawn.py, seen under load, because starting multiprocessing's resource tracker had unblocked
    SIGINT for the first worker). Moments are waited for, not timed: the same on a busy machine."""
    from pe_course.round.grade import grade_round
    from pe_course.runners.local import LocalRunner

    for student in ("ani", "budi", "citra", "dewi"):
        nb = reference_nb("01_embedding")
        nb.cells.insert(3, __import__("nbformat").v4.new_code_cell(SLOW_EMBED))
        course_copy.submit(student, {"01_embedding": nb})
    # this round's own temporary directory: what it leaves is told apart from other jobs' sandboxes
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = {p.name for p in scratch.glob("pe-sandbox-*")}
    proc = subprocess.Popen(
        [PE_COURSE, "grade", "--jobs", "2"],
        cwd=course_copy.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "200", "TMPDIR": str(scratch)},
    )
    if moment == "first-worker-starts":
        _wait_for(lambda: _workers(proc.pid), proc, "worker process")
        # from its first instruction, until it ignores SIGINT, a worker holds a Ctrl-C pending: one
        # delivered while Python imports prints a traceback (when it comes is luck; what the worker
        # would do with it is not)
        for worker in _workers(proc.pid):
            assert _sigint_held(worker), f"worker {worker} would take a Ctrl-C while starting"
        time.sleep(0.2)  # into its imports
    else:  # each sandbox has its scratch directory in TMPDIR, removed when it ends
        _wait_for(lambda: len(list(scratch.glob("pe-sandbox-*"))) >= 2, proc, "two sandboxes")
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)  # `kill <pid>`: the main process only
    else:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole process group
    started = time.monotonic()
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode == 130, out
    assert "Interrupted." in out and "Traceback" not in out
    time.sleep(0.5)
    leftovers = subprocess.run(["pgrep", "-f", str(course_copy.root)], capture_output=True, text=True).stdout
    assert leftovers == "", f"processes left running: {leftovers}"
    # a sandbox's bubblewrap names its scratch directory (the workers and kernels inside die with it)
    assert subprocess.run(["pgrep", "-f", str(scratch)], capture_output=True).returncode == 1
    assert {p.name for p in scratch.glob("pe-sandbox-*")} <= before, "scratch directories left behind"
    assert not (course_copy.root / ".pe-course" / "work").exists()
    resumed = grade_round(
        course_copy.course, LocalRunner(2)
    )  # the gradebook is consistent and the round goes on
    assert sorted(resumed.graded + resumed.skipped) == ["ani", "budi", "citra", "dewi"]
    assert all(course_copy.scores()[(s, "01_embedding", "test_embed")] == 3 for s in ("ani", "dewi"))

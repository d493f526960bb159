"""Grading on a real Dask cluster: a `dask scheduler` and two `dask worker` processes started here,
in directories that do not hold the course, give the same results as local grading — for a small class
of every kind of submission and for a larger class (more students than the round keeps in flight, four
times over), with each student's feedback pages made on the workers; a worker killed mid-run has its task graded elsewhere and nothing is merged twice; an
unreachable scheduler is one line."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import (
    CourseCopy,
    append_code,
    path_without_bwrap,
    reference_nb,
    release_nb,
    requires_bwrap,
    with_code,
)
from local_cluster import LocalCluster, connect

from pe_course.round.grade import grade_round
from pe_course.round.resume import GradeState
from pe_course.runners.dask_cluster import DaskRunner
from pe_course.runners.local import LocalRunner
from pe_course.sandbox.leftovers import RECORD

pytest.importorskip("distributed")
pytestmark = [pytest.mark.slow, requires_bwrap]

WRONG_PE = """def positional_encoding(length, d_model, base=10000.0):
    angle = np.arange(length)[:, None] * base ** (-np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angle), np.sin(angle)
    return pe"""

# Looks around and tries to leave: on a worker it must see no more than locally (no course files).
NOSY = """import os
print(sorted(os.listdir("/")), os.path.exists("gradebook.db"), os.path.exists("../graders"))
raise SystemExit("keluar")"""

# Two notebooks per student keep the tests fast; one submission unreadable and hostile.
CLASS = {
    "ani": {"01_embedding": reference_nb("01_embedding"), "02_sinusoidal": reference_nb("02_sinusoidal")},
    "budi": {"01_embedding": release_nb("01_embedding"), "02_sinusoidal": release_nb("02_sinusoidal")},
    "citra": {
        "01_embedding": reference_nb("01_embedding"),
        "02_sinusoidal": with_code(reference_nb("02_sinusoidal"), "positional_encoding", WRONG_PE),
    },
    "eko": {"01_embedding": "{ not json", "02_sinusoidal": append_code(reference_nb("02_sinusoidal"), NOSY)},
}
WRONG_EMBED = """def embed(ids, tok_table, pos_table):
    return np.asarray(tok_table, dtype=float)[np.asarray(ids, dtype=int)]"""  # forgets the positions

# A class of 32 students, one notebook each (the cheapest real submission: every per-student cost is
# paid — sandbox, kernel, nbgrader's apps, the private gradebook, the feedback pages — over the shortest
# notebook), of four kinds; each submission carries the timestamp `nbgrader collect` writes, which goes
# with the feedback pages. The round keeps 8 tasks in flight on two one-thread workers (the Dask
# runner's MIN_IN_FLIGHT), so the class fills that window four times over: tasks wait, are sent as
# others end, and both workers take turns. (What a hundred or more cost is measured by
# bench/bench_grading.py, bench/README.md.)
LARGE_KINDS = {
    "benar": (8, {"01_embedding": reference_nb("01_embedding")}),
    "kosong": (8, {"01_embedding": release_nb("01_embedding")}),
    "salah": (8, {"01_embedding": with_code(reference_nb("01_embedding"), "embed", WRONG_EMBED)}),
    "rusak": (8, {"01_embedding": "{ not json"}),
}
IN_FLIGHT = 8  # tasks the round sends ahead to two one-thread workers
LARGE_CLASS = {
    f"{kind}{i:02d}": notebooks for kind, (count, notebooks) in LARGE_KINDS.items() for i in range(count)
}
VOLATILE = ("seconds", "resources", "isolation")  # timings and resource figures of the run itself


@pytest.fixture(scope="module")
def graded_locally(_course_template, tmp_path_factory) -> CourseCopy:
    """The class graded by local worker processes: what the cluster must reproduce."""
    root = tmp_path_factory.mktemp("local") / "course"
    shutil.copytree(_course_template, root)
    local = CourseCopy(root)
    for student, notebooks in CLASS.items():
        local.submit(student, notebooks)
    summary = grade_round(local.course, LocalRunner(2), feedback=True)
    assert sorted(summary.graded) == sorted(CLASS) and not summary.failed
    assert sorted(summary.feedback) == sorted(CLASS)
    return local


@pytest.fixture
def class_course(course_copy) -> CourseCopy:
    for student, notebooks in CLASS.items():
        course_copy.submit(student, notebooks)
    return course_copy


def _autograded(copy: CourseCopy) -> dict:
    """Every autograded notebook's cells (source, outputs, execution counts) and record, by path."""
    out = {}
    folder = copy.root / "autograded"
    for path in sorted(folder.rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        out[str(path.relative_to(folder))] = [
            (c.cell_type, c.source, c.get("outputs"), c.get("execution_count")) for c in nb.cells
        ]
    for path in sorted(folder.rglob("*.grading.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        out[str(path.relative_to(folder))] = {k: v for k, v in record.items() if k not in VOLATILE}
    return out


def _same_cells(got: dict, expected: dict) -> None:
    assert sorted(got) == sorted(expected)
    for path in expected:
        if isinstance(expected[path], list):
            assert len(got[path]) == len(expected[path]), path
            for index, (a, b) in enumerate(zip(got[path], expected[path], strict=True)):
                assert a == b, f"{path} cell {index}"
        else:
            assert got[path] == expected[path], path


def _grade_rows(copy: CourseCopy) -> list[tuple[str, str, str]]:
    """Every grade row of the course gradebook (duplicates would show up here)."""
    from nbgrader.api import Grade

    with copy.course.gradebook() as gb:
        return sorted((g.student.id, g.notebook.name, g.name) for g in gb.db.query(Grade).all())


def _grade_cells(copy: CourseCopy) -> int:
    with copy.course.gradebook() as gb:
        return sum(len(nb.grade_cells) for nb in gb.find_assignment("positional-encoding").notebooks)


def _feedback_pages(copy: CourseCopy) -> dict[str, str]:
    folder = copy.root / "feedback"
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_cluster_grades_exactly_as_local_workers(cluster, class_course, graded_locally):
    client = connect(cluster, 2)
    events = []
    try:
        summary = grade_round(
            class_course.course,
            DaskRunner(client),
            feedback=True,
            on_event=lambda k, s, _: events.append((k, s)),
        )
    finally:
        client.close()
    assert sorted(summary.graded) == sorted(CLASS) and not summary.failed
    assert class_course.scores() == graded_locally.scores()
    _same_cells(_autograded(class_course), _autograded(graded_locally))  # cell by cell, records too
    # the feedback was made on the workers, each student's with their grades: the same pages as locally
    assert sorted(summary.feedback) == sorted(CLASS) and summary.feedback_seconds == 0.0
    for student in CLASS:
        assert events.index(("feedback", student)) == events.index(("graded", student)) + 1
    pages = _feedback_pages(class_course)
    assert pages == _feedback_pages(graded_locally) and {p.split("/")[0] for p in pages} == set(CLASS)
    scores = class_course.scores()
    assert scores[("ani", "02_sinusoidal", "test_positional_encoding")] == 3
    assert scores[("budi", "01_embedding", "test_embed")] == 0
    assert 0 < scores[("citra", "02_sinusoidal", "test_positional_encoding")] < 3
    assert any("unreadable-notebook" in why for why in summary.attention["eko"])
    # the workers kept nothing: their temporary directories hold only Dask's own scratch space (and the
    # test cluster's log and stall record, and the note of where the worker made groups: sandbox.leftovers)
    for name in ("w1", "w2"):
        kept = {"log", "stalls", "dask-scratch-space", f"{RECORD}{os.geteuid()}"}
        left = {p.name for p in (cluster.base / name).iterdir()} - kept
        assert not left, f"{name} left {left}"
    # and the resumability state works as locally: a second run skips everyone
    client = connect(cluster, 2)
    try:
        again = grade_round(class_course.course, DaskRunner(client))
        # before Python 3.12, the round stopped the workers' task profiler (it can deadlock CPython)
        profiling = client.run(lambda dask_worker: dask_worker.periodic_callbacks["profile"].is_running())
    finally:
        client.close()
    assert list(profiling.values()) == [sys.version_info >= (3, 12)] * 2, profiling
    assert again.graded == [] and sorted(again.skipped) == sorted(CLASS)


def test_killed_worker_has_its_task_graded_elsewhere_once(cluster, class_course, graded_locally):
    client = connect(cluster, 2)
    events: list[tuple[str, str]] = []
    killed: dict[str, list[str]] = {}

    def kill_a_busy_worker(kind, student, summary):
        events.append((kind, student))
        if kind != "graded" or killed:
            return
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:  # a worker in the middle of a student
            for address, keys in client.processing().items():
                busy = [str(k) for k in keys if str(k).startswith("pe-grade-")]
                name = client.scheduler_info()["workers"].get(address, {}).get("name")
                if busy and name in ("w1", "w2"):
                    time.sleep(1.0)  # its sandbox is running now
                    cluster.kill(name)
                    killed[name] = busy
                    break
            else:
                time.sleep(0.1)

    try:
        summary = grade_round(class_course.course, DaskRunner(client), on_event=kill_a_busy_worker)
        survivors = {w["name"] for w in client.scheduler_info()["workers"].values()}
    finally:
        client.close()
    assert killed, "no worker was busy after the first student: nothing was killed"
    ((victim, lost),) = killed.items()
    assert victim not in survivors
    assert sorted(summary.graded) == sorted(CLASS) and not summary.failed
    graded = [student for kind, student in events if kind == "graded"]
    assert sorted(graded) == sorted(CLASS), "every student merged exactly once"
    assert any(key.endswith(tuple(CLASS)) for key in lost)  # it died holding a student, graded by the other
    rows = _grade_rows(class_course)  # one row per student and grade cell: nothing twice
    assert len(rows) == len(set(rows)) == len(CLASS) * _grade_cells(class_course)
    assert rows == _grade_rows(graded_locally)
    assert class_course.scores() == graded_locally.scores()
    _same_cells(_autograded(class_course), _autograded(graded_locally))
    assert sorted(GradeState(class_course.course).data) == sorted(CLASS)


def test_unreachable_scheduler_is_one_clear_line(course_copy):
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = Path(sys.executable).with_name("pe-course")
    started = time.monotonic()
    proc = subprocess.run(
        [str(exe), "grade", "--scheduler", f"tcp://127.0.0.1:{port}"],
        cwd=course_copy.root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    output = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode == 2
    assert len(output) == 1 and "Traceback" not in proc.stderr, output
    assert output[0].startswith(f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}")
    # said at once (nobody listens there), not after Dask's client has retried for its whole timeout
    assert "Connection refused" in output[0], output[0]
    assert time.monotonic() - started < 120
    assert not (course_copy.root / "autograded").exists()


def test_the_bundle_holds_only_what_a_worker_needs(class_course, tmp_path):
    """No gradebook, no submissions, no grading state travel in the once-per-run bundle."""
    import io
    import tarfile

    from pe_course.round.task import build_template
    from pe_course.runners.bundle import course_bundle

    (class_course.root / ".pe-course").mkdir(exist_ok=True)
    bundle = course_bundle(class_course.course, build_template(class_course.course, tmp_path / "template.db"))
    with tarfile.open(fileobj=io.BytesIO(bundle)) as tar:
        names = tar.getnames()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"nbgrader_config.py", "template.db", "source", "release", "graders"}
    assert "graders/positional-encoding/03_rotation/alternatives.py" in names
    assert "release/positional-encoding/01_embedding.ipynb" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith("gradebook.db")]


def test_a_worker_with_other_code_refuses_the_task(class_course):
    from pe_course.runners.bundle import submission_archive
    from pe_course.runners.dask_worker import grade_remote

    result = grade_remote(
        b"",
        "0" * 64,
        "not-this-package",
        "positional-encoding",
        "ani",
        submission_archive(class_course.course, "ani"),
        "fp",
    )
    assert not result.outcome.ok and "different pe-course" in result.outcome.error and result.archive == b""


def test_a_worker_that_cannot_isolate_is_named_and_refuses_its_tasks(class_course, tmp_path):
    """Fail closed on a cluster: the round does not start while a worker lacks bubblewrap, and a task
    that reaches such a worker anyway (one that joined later) is refused there and named."""
    started = LocalCluster(tmp_path / "cluster")
    started.add_workers("w-nobwrap", env={"PATH": path_without_bwrap(tmp_path / "bin")})
    try:
        client = connect(started, 1)
        exe = Path(sys.executable).with_name("pe-course")
        proc = subprocess.run(
            [str(exe), "grade", "--scheduler", started.address],
            cwd=class_course.root,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "COLUMNS": "300"},
            check=False,
        )
        assert proc.returncode == 2, proc.stdout + proc.stderr
        refusal = [line for line in proc.stdout.splitlines() if "cannot isolate student code" in line]
        assert len(refusal) == 1 and "w-nobwrap" in refusal[0], proc.stdout
        assert "bubblewrap (bwrap) is not installed" in refusal[0] and "Traceback" not in proc.stderr
        assert not (class_course.root / "autograded").exists()
        summary = grade_round(class_course.course, DaskRunner(client), ["ani"])
        client.close()
        assert summary.graded == [] and list(summary.failed) == ["ani"], summary
        assert summary.failed["ani"].startswith("worker w-nobwrap: Refusing to run student code: bubblewrap")
        with class_course.course.gradebook() as gb:
            assert gb.find_assignment("positional-encoding").submissions == []
    finally:
        started.close()


def test_a_student_with_manual_scores_gets_the_feedback_made_here_with_them(cluster, course_copy):
    """A worker's pages come from its private gradebook, which has no manual scores: a student who
    already has some (a re-grade after formgrader) gets pages made here, from the course gradebook."""
    course_copy.submit("ani", {"01_embedding": reference_nb("01_embedding")})
    page = course_copy.root / "feedback" / "ani" / "positional-encoding" / "01_embedding.html"
    client = connect(cluster, 2)
    try:
        first = grade_round(course_copy.course, DaskRunner(client), feedback=True)
        assert first.feedback == ["ani"] and first.feedback_seconds == 0.0  # made on a worker
        assert "Score: 7.0 / 9.0" in " ".join(page.read_text(encoding="utf-8").split())
        with course_copy.course.gradebook() as gb:  # the written answer graded in formgrader
            grade = gb.find_grade("answer_untrained_positions", "01_embedding", "positional-encoding", "ani")
            grade.manual_score = 1.5
            gb.db.commit()
        again = grade_round(course_copy.course, DaskRunner(client), feedback=True, force=True)
    finally:
        client.close()
    assert again.graded == ["ani"] and again.feedback == ["ani"] and again.feedback_seconds > 0
    assert "Score: 8.5 / 9.0" in " ".join(page.read_text(encoding="utf-8").split())


def _submit_large_class(copy: CourseCopy, students) -> None:
    for student in students:
        folder = copy.submit(student, LARGE_CLASS[student])
        (folder / "timestamp.txt").write_text("2026-12-01 08:00:00.000000 UTC")


def _first_of_kind(student: str) -> str:
    """The student graded locally for this one's kind: benar17 -> benar00."""
    return student.rstrip("0123456789") + "00"


def _as_first_of_kind(found: dict[str, object]) -> dict[str, object]:
    """Per path (student/assignment/...), what was found, with the student's name put as the first
    student of their kind's wherever it appears (records and pages name the student)."""
    out = {}
    for path, value in found.items():
        student = path.split("/", 1)[0]
        out[path] = json.loads(json.dumps(value).replace(student, _first_of_kind(student)))
    return out


def _expected_from_firsts(found_locally: dict[str, object], paths) -> dict[str, object]:
    """What each path of the large class should hold: the local round's for the first of its kind."""
    out = {p: found_locally[_first_of_kind(p.split("/", 1)[0]) + "/" + p.split("/", 1)[1]] for p in paths}
    return json.loads(json.dumps(out))  # as _as_first_of_kind gives it (tuples as lists)


@pytest.mark.timeout(1800)
def test_a_large_class_on_two_workers_is_graded_as_locally_with_feedback_on_the_workers(cluster, make_course):
    """32 students on the cluster; locally, the first student of each kind (the others of a kind
    submitted the same notebook, so each must get exactly what the first got, names aside)."""
    from distributed import get_task_stream

    assert len(LARGE_CLASS) == 4 * IN_FLIGHT
    firsts = [f"{kind}00" for kind in LARGE_KINDS]
    local, remote = make_course("local"), make_course("remote")
    _submit_large_class(local, firsts)
    _submit_large_class(remote, LARGE_CLASS)
    here = grade_round(local.course, LocalRunner(2), feedback=True)
    assert sorted(here.graded) == sorted(firsts) and not here.failed
    assert sorted(here.feedback) == sorted(firsts)
    client = connect(cluster, 2)
    events: list[tuple[str, str]] = []
    names: dict[str, str] = {}  # worker address -> name, as seen during the round (a nanny may restart its
    # worker under load: the same name comes back at a new address, and its tasks run again there)

    def on_event(kind, student, _summary):
        events.append((kind, student))
        names.update({a: w["name"] for a, w in client.scheduler_info()["workers"].items()})

    try:
        with get_task_stream(client) as stream:
            summary = grade_round(remote.course, DaskRunner(client), feedback=True, on_event=on_event)
        on_event("end", "", None)
    finally:
        client.close()
    assert sorted(summary.graded) == sorted(LARGE_CLASS) and not summary.failed, summary.failed
    # every student's pages were made on a worker with the grades and came back with them: none was
    # made on this machine (feedback_seconds counts only pages made here, from the course gradebook),
    # and each "feedback" follows its student's "graded", at the same commit
    assert sorted(summary.feedback) == sorted(LARGE_CLASS) and not summary.feedback_failed
    assert summary.feedback_seconds == 0.0
    events.pop()  # ("end", "")
    for student in LARGE_CLASS:
        assert events.index(("feedback", student)) == events.index(("graded", student)) + 1
    graded_on = {
        str(t["key"]).rsplit("-", 1)[-1]: names.get(t["worker"])
        for t in stream.data
        if "pe-grade-" in str(t["key"])
    }
    assert sorted(graded_on) == sorted(LARGE_CLASS) and set(graded_on.values()) == {"w1", "w2"}
    # the gradebook, records, autograded notebooks and pages of every student: as the local round's
    # for the first of their kind
    here_scores = local.scores()
    assert remote.scores() == {
        (student, nb, cell): here_scores[(_first_of_kind(student), nb, cell)]
        for (student, nb, cell) in remote.scores()
    }
    rows = _grade_rows(remote)
    assert len(rows) == len(set(rows)) == len(LARGE_CLASS) * _grade_cells(remote)
    got = _autograded(remote)
    _same_cells(_as_first_of_kind(got), _expected_from_firsts(_autograded(local), got))
    pages = _feedback_pages(remote)
    assert {p.split("/")[0] for p in pages} == set(LARGE_CLASS)
    assert _as_first_of_kind(pages) == _expected_from_firsts(_feedback_pages(local), pages)
    # the four kinds were told apart (the comparison is not between empty results)
    scores = remote.scores()
    assert scores[("benar07", "01_embedding", "test_embed")] > 0
    assert scores[("kosong07", "01_embedding", "test_embed")] == 0
    assert (
        0
        < scores[("salah07", "01_embedding", "test_embed")]
        < scores[("benar07", "01_embedding", "test_embed")]
    )
    assert any("unreadable-notebook" in why for why in summary.attention["rusak07"])
    # the submission's timestamp goes with the pages (nbgrader's release_feedback needs it)
    assert pages["benar07/positional-encoding/timestamp.txt"] == "2026-12-01 08:00:00.000000 UTC"
    # no warning in the workers' logs that is about Dask's threads rather than the graders (dask_worker.py)
    for name in ("w1", "w2"):
        assert "HypothesisDeprecationWarning" not in (cluster.base / name / "log").read_text(errors="replace")


def test_a_worker_whose_event_loop_stalls_leaves_its_stacks(tmp_path):
    """The test cluster's stall watch (tests/dask_stall_watch.py) does what the large class relies on to
    explain a stalled worker: a worker's loop held for longer than the watch allows leaves every
    thread's stack, naming what held it; a loop that runs leaves nothing."""
    cluster = LocalCluster(tmp_path / "cluster")
    try:
        cluster.add_workers("w1", env={"PE_TEST_STALL_SECONDS": "1.5"})
        client = connect(cluster, 1)
        try:
            time.sleep(3)
            assert cluster.stalls() == {}
            hold_the_event_loop = lambda: time.sleep(4.0)  # noqa: E731 (a lambda travels by value)
            client.run(hold_the_event_loop)
        finally:
            client.close()
    finally:
        cluster.close()
    stalls = cluster.stalls()
    assert list(stalls) == ["w1"] and "<lambda>" in stalls["w1"], stalls


def test_a_round_stops_the_workers_task_profiler_before_its_first_task(tmp_path):
    """What DaskRunner.open runs on every worker before any task (Python 3.11 and older: the task
    profiler can deadlock a worker, see dask_worker._stop_task_profiler); later Pythons keep it."""
    from pe_course.runners.dask_worker import stop_task_profiler

    cluster = LocalCluster(tmp_path / "cluster")
    try:
        cluster.add_workers("w1")
        client = connect(cluster, 1)
        try:
            running = lambda dask_worker: dask_worker.periodic_callbacks["profile"].is_running()  # noqa: E731
            assert list(client.run(running).values()) == [True]
            client.run(stop_task_profiler)
            assert list(client.run(running).values()) == [sys.version_info >= (3, 12)]
        finally:
            client.close()
    finally:
        cluster.close()

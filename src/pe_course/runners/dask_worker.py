"""What runs on a Dask worker: one student's :func:`~pe_course.round.task.grade_one`, exactly as a
local worker process runs it, in a private course directory built from what the task carries.

A worker needs only this package (the same version: :func:`package_digest`) and bubblewrap — never the
course directory. It unpacks the course bundle once per run (cached by its digest, removed when the
round ends: :func:`forget_bundle`) and grades one student at a time (nbgrader changes the process's
working directory). A worker whose code differs from the instructor's, or where bubblewrap does not
work without the instructor's opt-in, refuses the task and says so.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..course.versions import tree_digest
from ..round.task import GradeOutcome, GradeTask, grade_one
from ..sandbox import policy, selftest
from ..sandbox.scratch import sweep_left_behind
from .bundle import tar, untar

_LOCK = threading.Lock()  # nbgrader changes the process's working directory: one student at a time
_BUNDLES: dict[str, Path] = {}
_FORGOTTEN: set[str] = set()  # bundles of rounds that ended, removed as soon as no task uses them
_PACKAGE = Path(__file__).resolve().parents[1]  # pe_course


@dataclass
class RemoteResult:
    """What a worker sends back: the outcome (``staging`` empty) and a tar of the staging directory."""

    outcome: GradeOutcome
    archive: bytes
    worker: str = ""


def package_digest() -> str:
    """Of this package's code: the instructor's and each worker's must agree."""
    return tree_digest(("pe_course", _PACKAGE, "*.py"))


def the_bundle(data: bytes) -> bytes:
    """The bundle travels as this task's result, so the scheduler can recompute it on another worker
    when the worker holding it is lost."""
    return data


def grade_remote(
    bundle: bytes,
    digest: str,
    package: str,
    assignment: str,
    student: str,
    submission: bytes,
    fingerprint: str,
    unisolated: bool = False,
    feedback: bool = False,
    ungrouped: bool = False,
) -> RemoteResult:
    """One student on a Dask worker: :func:`~pe_course.round.task.grade_one` in a private course
    directory; the result is the private gradebook, the autograded folder and (with ``feedback``) the
    student's feedback pages, as a tar.

    A worker where bubblewrap does not work refuses (unless the instructor opted in with
    ``unisolated``), or where no resource group can be made (unless ``ungrouped``): the student is
    listed as failed with the worker's name and why."""
    import warnings

    warnings.filterwarnings("ignore", module="nbformat")  # students' notebooks often lack cell ids
    # Hypothesis warns of "the `random` module inside strategies" when the global random state changed
    # while it drew. Here the event loop's thread draws from `random` (Tornado's jittered periodic
    # callbacks, Dask's own choices) while this thread draws the graders' inputs, so the warning is about
    # Dask, not the graders: their draws use Hypothesis's own derandomized generator and are the same as
    # locally (tests/runners/test_distributed.py). In a local grading worker or the release build it shows.
    warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
    _stop_task_profiler()  # a worker that joined or restarted since the round began
    worker = _worker_name()
    with _LOCK:
        started = time.monotonic()
        if package != package_digest():
            why = (
                f"worker {worker} runs a different pe-course than the client: install the same version on "
                "every worker"
            )
            return RemoteResult(GradeOutcome(student, False, "", fingerprint, error=why), b"", worker)
        try:
            selftest.check(unisolated=unisolated, ungrouped=ungrouped)
        except policy.IsolationUnavailable as exc:
            return RemoteResult(
                GradeOutcome(student, False, "", fingerprint, error=f"worker {worker}: {exc}"), b"", worker
            )
        shared = _bundle_dir(bundle, digest)
        from hypothesis.configuration import set_hypothesis_home_dir

        # hypothesis would otherwise keep its cache where the working directory was when it was first
        # imported: inside the first task's scratch course directory (removed), recreated by later tasks
        set_hypothesis_home_dir(shared / ".hypothesis")
        root = Path(tempfile.mkdtemp(prefix="pe-course-task-"))
        try:
            shutil.copy(shared / "nbgrader_config.py", root / "nbgrader_config.py")
            for name in _bundled_folders(shared):  # source/, release/ and the graders' top folder
                (root / name).symlink_to(shared / name, target_is_directory=True)
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            untar(submission, folder)
            staging = root / "staging"
            task = GradeTask(
                str(root),
                assignment,
                student,
                str(shared / "template.db"),
                str(staging),
                fingerprint,
                unisolated,
                feedback,
                ungrouped,
            )
            outcome = grade_one(task)
            members = []
            if outcome.ok:
                folders = ["autograded", *(["feedback"] if outcome.feedback else [])]
                members = [("gradebook.db", staging / "gradebook.db")] + [
                    (str(p.relative_to(staging)), p)
                    for name in folders
                    for p in sorted((staging / name).rglob("*"))
                    if p.is_file() and not p.is_symlink()
                ]
            outcome.staging = ""
            outcome.seconds = time.monotonic() - started
            return RemoteResult(outcome, tar(members), worker)
        finally:
            shutil.rmtree(root, ignore_errors=True)
            _drop_forgotten()  # the round ended while this student was graded (Ctrl-C)


def _bundle_dir(bundle: bytes, digest: str) -> Path:
    folder = _BUNDLES.get(digest)
    if folder is not None and folder.is_dir():
        return folder
    if hashlib.sha256(bundle).hexdigest() != digest:
        raise ValueError("the course bundle arrived damaged")
    folder = Path(tempfile.mkdtemp(prefix=f"pe-course-bundle-{digest[:12]}-"))
    untar(bundle, folder)
    _BUNDLES[digest] = folder
    _FORGOTTEN.discard(digest)
    sweep_left_behind()  # left on this machine by a worker that was killed outright
    return folder


def _bundled_folders(shared: Path) -> list[str]:
    """The bundle's top folders (``source``, ``release`` and where the graders are), not the cache."""
    return sorted(p.name for p in shared.iterdir() if p.is_dir() and not p.name.startswith("."))


def forget_bundle(digest: str) -> None:
    """Run by ``client.run`` on the worker's event loop, so it never waits: a bundle still in use by a
    (cancelled) task is removed when that task ends."""
    _FORGOTTEN.add(digest)
    if _LOCK.acquire(blocking=False):
        try:
            _drop_forgotten()
        finally:
            _LOCK.release()


def _drop_forgotten() -> None:
    """With ``_LOCK`` held."""
    for digest in list(_FORGOTTEN):
        _FORGOTTEN.discard(digest)
        folder = _BUNDLES.pop(digest, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def stop_task_profiler(dask_worker: Any) -> None:
    """Run by ``client.run`` on each worker's event loop when a round opens (Dask passes the worker as
    ``dask_worker``); ``grade_remote`` asks again, for workers that join or restart later. See
    :func:`_stop_task_profiler`."""
    _stop_task_profiler(dask_worker, on_loop=True)


def _stop_task_profiler(worker: Any = None, on_loop: bool = False) -> None:
    """Stop the worker's statistical profiler of running tasks, before Python 3.12.

    Every 10 ms it samples the task's thread with ``sys._current_frames()``, which can deadlock CPython
    3.11 and older for good (the garbage collector runs while the runtime's thread list is locked:
    CPython gh-106883, dask/distributed#8616; Dask turned off only its event-loop profiler on 3.11). The
    worker then sends no heartbeat and holds its students until the scheduler restarts it (after five
    minutes by default): seen in this project's tests, a class waiting 537 s for one worker. The profiler
    only feeds the dashboard's profile page. Without ``worker``: the worker running this task."""
    if sys.version_info >= (3, 12):
        return
    if worker is None:
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):
            return
    for name in ("profile", "profile-cycle"):
        callback = worker.periodic_callbacks.get(name)
        if callback is not None and callback.is_running():
            if on_loop:
                callback.stop()
            else:  # from the task's thread: tornado's loop takes callbacks from other threads
                worker.loop.add_callback(callback.stop)


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"

"""Grading beyond one machine: the same per-student tasks on a Dask distributed cluster.

``pe-course grade positional-encoding --scheduler tcp://HOST:PORT`` sends every student to a
``dask worker`` as a self-contained task. A worker needs only this package (the same version) and
bubblewrap — never the course directory:

- **Once per run** the client uploads a *course bundle* (a tar of ``nbgrader_config.py``,
  ``source/`` and ``release/`` of the assignment, ``graders/`` and the template gradebook holding the
  assignment's structure). It travels as the result of a task whose argument is the bundle itself,
  so the scheduler can recompute it on another worker when the worker holding it is lost. Each
  worker unpacks it once (cached by its digest).
- **Per student** the task carries that student's ``submitted/<student>/<assignment>/`` as a tar.
  The worker builds a private course directory around it and runs :func:`pe_course.batch.grade_one`
  — exactly the function the local worker processes run — and sends back a tar of the result: the
  private gradebook, the autograded folder (notebooks and ``.grading.json`` records) and, when the
  round makes feedback, the student's feedback pages made from that private gradebook.
- **The client is the only writer**: it unpacks each result into its own staging directory and
  merges it with :func:`pe_course.batch.finish` as a local round does (one transaction per student,
  then the resumability state). A student is merged at most once per round, whatever the cluster
  does; a worker that dies has its tasks rescheduled by Dask on the others.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .batch import GradeOutcome, GradeTask, RoundSummary, feedback_one, finish, grade_one, settle
from .course import Course
from .sandbox import groups
from .writer import GradebookWriter

CONNECT_TIMEOUT = 15  # seconds to reach the scheduler before giving up
IN_FLIGHT_PER_THREAD = 2  # tasks submitted ahead per worker thread (bounded memory for large classes)
MIN_IN_FLIGHT = 8
_BUNDLE_KEY = "pe-course-bundle"


class ClusterUnavailable(RuntimeError):
    """The scheduler could not be reached (one line, no traceback)."""


@dataclass
class RemoteResult:
    """What a worker sends back: the outcome (``staging`` empty) and a tar of the staging directory."""

    outcome: GradeOutcome
    archive: bytes
    worker: str = ""


# --------------------------------------------------------------------------------------------
# Client side
# --------------------------------------------------------------------------------------------
def connect(address: str, timeout: float = CONNECT_TIMEOUT):
    """A ``distributed.Client`` for ``address`` or :class:`ClusterUnavailable` saying why."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise ClusterUnavailable('Dask distributed is not installed: pip install -e ".[dask]"') from exc
    for name in ("distributed", "tornado"):  # worker losses are reported in the round's summary instead
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailable(f"cannot reach the Dask scheduler at {address}: {_one_line(exc)}") from None
    return client


def describe(client) -> tuple[int, int, list[str]]:
    """(workers, threads, notes) of the cluster as the scheduler sees it now."""
    workers = (
        client.scheduler_info(n_workers=-1).get("workers", {})
        if _takes_n_workers(client)
        else client.scheduler_info().get("workers", {})
    )
    threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
    notes = []
    if any(int(w.get("nthreads", 1)) > 1 for w in workers.values()):
        notes.append(
            "workers with more than one thread grade one student at a time (nbgrader changes the "
            "working directory): start them with --nthreads 1 and --nworkers N instead"
        )
    return len(workers), threads, notes


def worker_isolation(client, unisolated: bool = False) -> dict[str, list[str]]:
    """How each worker would isolate student code (its bubblewrap and resource groups): isolation ->
    workers. A worker that would refuse (no working bubblewrap, no opt-in) answers with its refusal,
    which starts with :data:`REFUSES`."""
    found: dict[str, list[str]] = {}
    with contextlib.suppress(Exception):  # a worker gone meanwhile
        names = {a: str(w.get("name", a)) for a, w in client.scheduler_info().get("workers", {}).items()}
        for address, isolation in client.run(_isolation, unisolated).items():
            name = names.get(address, address)
            found.setdefault(str(isolation), []).append(address if name == address else f"{name} ({address})")
    return found


REFUSES = "Refusing"


async def _isolation(unisolated: bool = False) -> str:
    """Run by ``client.run`` on the worker's event loop: the probe (it starts bwrap) goes to a thread."""
    import asyncio

    from .sandbox import Sandbox
    from .sandbox.policy import IsolationUnavailable

    def probe() -> str:
        try:
            return Sandbox(unisolated=unisolated).isolation
        except IsolationUnavailable as exc:
            return str(exc)

    return await asyncio.to_thread(probe)


def _takes_n_workers(client) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


def course_bundle(course: Course, template_db: Path) -> bytes:
    """Everything a worker needs besides the submissions, as one tar (deterministic for a digest)."""
    members = [("nbgrader_config.py", course.root / "nbgrader_config.py"), ("template.db", template_db)]
    for rel in (Path("source") / course.assignment, Path("release") / course.assignment, Path("graders")):
        folder = course.root / rel
        members += [
            (str(p.relative_to(course.root)), p)
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not {"__pycache__", ".hypothesis", ".ipynb_checkpoints"} & set(p.parts)
        ]
    return _tar(members)


def submission_archive(course: Course, student: str) -> bytes:
    folder = course.submitted / student / course.assignment
    return _tar([(str(p.relative_to(folder)), p) for p in sorted(folder.rglob("*")) if p.is_file()])


def run_on_cluster(
    client,
    writer: GradebookWriter,
    tasks: list[GradeTask],
    template_db: Path,
    state,
    summary: RoundSummary,
    notify,
    feedback: bool = False,
) -> None:
    """Grade ``tasks`` on the cluster; merge each result here (``writer``), once, as it arrives. With
    ``feedback`` each worker also makes its student's feedback pages, moved into place with the grades."""
    from distributed import as_completed

    course = writer.course
    bundle = course_bundle(course, template_db)
    digest = hashlib.sha256(bundle).hexdigest()
    run = uuid.uuid4().hex[:8]
    bundle_future = client.submit(_the_bundle, bundle, key=f"{_BUNDLE_KEY}-{digest[:16]}-{run}", pure=False)
    package = package_digest()
    by_key: dict[str, GradeTask] = {}
    outstanding: dict[str, object] = {}  # key -> future, for cancelling on Ctrl-C
    queue = list(tasks)
    merged: set[str] = set()
    futures = as_completed(loop=client.loop)

    def submit_next() -> None:
        task = queue.pop(0)
        key = f"pe-grade-{run}-{task.student}"
        by_key[key] = task
        outstanding[key] = client.submit(
            grade_remote,
            bundle_future,
            digest,
            package,
            task.assignment,
            task.student,
            submission_archive(course, task.student),
            task.fingerprint,
            task.unisolated,
            feedback,
            key=key,
            pure=False,
        )
        futures.add(outstanding[key])

    threads = {"n": 0, "at": -1e9}

    def top_up() -> None:  # workers may join during the round (batch jobs starting): the window follows
        if time.monotonic() - threads["at"] > 10:
            threads["n"], threads["at"] = describe(client)[1], time.monotonic()
        while queue and len(outstanding) < max(MIN_IN_FLIGHT, IN_FLIGHT_PER_THREAD * threads["n"]):
            submit_next()

    try:
        top_up()
        for future in futures:
            task = by_key.pop(future.key)
            outstanding.pop(future.key, None)
            try:
                result: RemoteResult = future.result()
                outcome = _received(result, Path(task.staging))
            except Exception as exc:  # noqa: BLE001 (KilledWorker: the task's workers kept dying)
                outcome = GradeOutcome(task.student, False, task.staging, task.fingerprint, error=_why(exc))
            future.release()
            if queue:
                top_up()
            if task.student in merged:  # never twice into the gradebook, whatever the cluster did
                continue
            merged.add(task.student)
            # results that arrive faster than the writer commits share one transaction
            finish(writer, outcome, state, summary, notify, settle_now=not futures.has_ready())
        settle(writer, state, summary, notify)
    except BaseException:  # Ctrl-C: queued and running tasks are cancelled; what was merged stays
        client.cancel(list(outstanding.values()), force=True)
        with contextlib.suppress(Exception):
            settle(writer, state, summary, notify)  # results already received are complete
        raise
    finally:
        bundle_future.release()
        _forget_everywhere(client, digest)


def _received(result: RemoteResult, staging: Path) -> GradeOutcome:
    staging.mkdir(parents=True, exist_ok=True)
    if result.archive:  # a refused task (other code, no isolation) sends back only why
        _untar(result.archive, staging)
    outcome = result.outcome
    outcome.staging = str(staging)
    return outcome


def _why(exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        return "grading workers died while grading this student (Dask gave up after several attempts)"
    if name == "CancelledError":
        return "the task was cancelled (the scheduler lost it or was restarted)"
    return f"{name}: {_one_line(exc)}"


def _forget_everywhere(client, digest: str) -> None:
    """Ask every worker to remove its unpacked copy of this run's bundle (best effort)."""
    with contextlib.suppress(Exception):  # a worker gone meanwhile: its temp dir went with it
        client.run(forget_bundle, digest)


# --------------------------------------------------------------------------------------------
# Worker side
# --------------------------------------------------------------------------------------------
_LOCK = threading.Lock()  # nbgrader changes the process's working directory: one student at a time
_BUNDLES: dict[str, Path] = {}
_FORGOTTEN: set[str] = set()  # bundles of rounds that ended, removed as soon as no task uses them


def _the_bundle(data: bytes) -> bytes:
    return data


def package_digest() -> str:
    """Of this package's code: the client's and each worker's must agree."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for path in sorted(p for p in here.rglob("*.py") if "__pycache__" not in p.parts):
        digest.update(path.relative_to(here).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _bundle_dir(bundle: bytes, digest: str) -> Path:
    folder = _BUNDLES.get(digest)
    if folder is not None and folder.is_dir():
        return folder
    if hashlib.sha256(bundle).hexdigest() != digest:
        raise ValueError("the course bundle arrived damaged")
    folder = Path(tempfile.mkdtemp(prefix=f"pe-course-bundle-{digest[:12]}-"))
    _untar(bundle, folder)
    _BUNDLES[digest] = folder
    _FORGOTTEN.discard(digest)
    groups.sweep_stale()  # groups left on this machine by a worker that was killed outright
    return folder


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
) -> RemoteResult:
    """One student on a Dask worker: :func:`pe_course.batch.grade_one` in a private course directory.

    A worker where bubblewrap does not work refuses (unless the instructor opted in with
    ``unisolated``): the student is listed as failed with the worker's name and why."""
    import warnings

    warnings.filterwarnings("ignore", module="nbformat")  # students' notebooks often lack cell ids
    worker = _worker_name()
    with _LOCK:
        started = time.monotonic()
        if package != package_digest():
            return RemoteResult(
                GradeOutcome(
                    student,
                    False,
                    "",
                    fingerprint,
                    error=(
                        f"worker {worker} runs a different pe-course than the client: install the same version on "
                        "every worker"
                    ),
                ),
                b"",
                worker,
            )
        from .sandbox import policy

        try:
            policy.check(unisolated=unisolated)
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
            for name in ("source", "release", "graders"):
                (root / name).symlink_to(shared / name, target_is_directory=True)
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            _untar(submission, folder)
            staging = root / "staging"
            outcome = grade_one(
                GradeTask(
                    str(root),
                    assignment,
                    student,
                    str(shared / "template.db"),
                    str(staging),
                    fingerprint,
                    unisolated,
                )
            )
            members = []
            if outcome.ok:
                if feedback:  # from the private gradebook: the grades just given, as a local round's pages
                    _, outcome.feedback, outcome.feedback_error = feedback_one(
                        str(root),
                        assignment,
                        student,
                        {
                            "CourseDirectory.db_url": f"sqlite:///{staging / 'gradebook.db'}",
                            "CourseDirectory.autograded_directory": str(staging / "autograded"),
                        },
                    )  # pages in root/feedback/<student>/<assignment>/, tidied as a local round's
                members = [("gradebook.db", staging / "gradebook.db")]
                folders = [(staging, staging / "autograded")] + (
                    [(root, root / "feedback")] if outcome.feedback else []
                )
                members += [
                    (str(p.relative_to(base)), p)
                    for base, folder in folders
                    for p in sorted(folder.rglob("*"))
                    if p.is_file() and not p.is_symlink()
                ]
            outcome.staging = ""
            outcome.seconds = time.monotonic() - started
            return RemoteResult(outcome, _tar(members), worker)
        finally:
            shutil.rmtree(root, ignore_errors=True)
            _drop_forgotten()  # the round ended while this student was graded (Ctrl-C)


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


# --------------------------------------------------------------------------------------------
# Archives
# --------------------------------------------------------------------------------------------
def _tar(members: list[tuple[str, Path]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for name, path in members:
            info = tar.gettarinfo(str(path), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as f:
                tar.addfile(info, f)
    return buffer.getvalue()


def _untar(data: bytes, dest: Path) -> None:
    """Regular files only, inside ``dest`` (the archives are ours, but a path is never trusted)."""
    dest = dest.resolve()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            target = (dest / member.name).resolve()
            if not member.isfile() or dest not in target.parents:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                continue
            with source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
            os.utime(target, (member.mtime, member.mtime))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


__all__ = ["ClusterUnavailable", "connect", "describe", "grade_remote", "run_on_cluster", "worker_isolation"]

"""Grading beyond one machine: a round's tasks on the workers of a Dask distributed cluster.

``pe-course grade <assignment> --scheduler tcp://HOST:PORT`` makes a :class:`DaskRunner`:

- **once per run** it uploads a course bundle (:func:`~.bundle.course_bundle`), as the result of a task
  whose argument is the bundle itself, so the scheduler can recompute it on another worker when the
  worker holding it is lost;
- **per student** the task carries that student's ``submitted/<student>/<assignment>/`` as a tar and runs
  :func:`~.dask_worker.grade_remote` (the local workers' ``grade_one``, with the student's feedback
  pages); the result is unpacked into the student's staging folder here, for the round's single writer;
- it keeps about two tasks per worker thread in flight (at least 8), and the window follows workers
  that join during the round; a worker that dies has its tasks rescheduled by Dask on the others, and
  a task that took down several workers in a row (``distributed.scheduler.allowed-failures``) comes
  back failed;
- a student's pages from the course gradebook (:class:`~pe_course.round.task.FeedbackTask`) are made
  on local processes: the workers never see the course gradebook.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import socket
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from ..course import Course
from ..round.runner import Runner, Task
from ..round.task import FeedbackTask, GradeOutcome, GradeTask
from .bundle import course_bundle, submission_archive, untar
from .dask_worker import (
    RemoteResult,
    forget_bundle,
    grade_remote,
    package_digest,
    stop_task_profiler,
    the_bundle,
)
from .local import WorkerPool

CONNECT_TIMEOUT = 15  # seconds to reach the scheduler before giving up
IN_FLIGHT_PER_THREAD = 2  # tasks submitted ahead per worker thread (bounded memory for large classes)
MIN_IN_FLIGHT = 8
THREADS_EVERY = 10.0  # seconds between two looks at how many worker threads the cluster has
REFUSES = "Refusing"  # how the isolation line of a worker that would refuse student code begins
_BUNDLE_KEY = "pe-course-bundle"


class ClusterUnavailable(RuntimeError):
    """The scheduler could not be reached (one line, no traceback)."""


def connect(address: str, timeout: float = CONNECT_TIMEOUT):
    """A ``distributed.Client`` for ``address`` or :class:`ClusterUnavailable` saying why."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise ClusterUnavailable('Dask distributed is not installed: pip install -e ".[dask]"') from exc
    for name in ("distributed", "tornado"):  # worker losses are reported in the round's summary instead
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        _refused_at_once(address)
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterUnavailable(
            f"cannot reach the Dask scheduler at {address}: {_one_line(exc)} "
            "(guide: docs/large-classes.md#a-very-large-class)"
        ) from None
    return client


def _refused_at_once(address: str) -> None:
    """Raise ``ConnectionRefusedError`` when nothing listens at a ``tcp://`` address: Dask's client
    would retry that for the whole connect timeout; a host that does not answer is left to it."""
    if not address.startswith("tcp://"):
        return
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    if not host or not port.isdigit():
        return
    with contextlib.suppress(socket.timeout, socket.gaierror):
        socket.create_connection((host.strip("[]"), int(port)), timeout=2).close()


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


def worker_isolation(client, unisolated: bool = False, ungrouped: bool = False) -> dict[str, list[str]]:
    """How each worker would isolate student code (its bubblewrap and resource groups): isolation ->
    workers. A worker that would refuse (no working bubblewrap or resource group, no opt-in) answers with its refusal,
    which starts with :data:`REFUSES`."""
    found: dict[str, list[str]] = {}
    with contextlib.suppress(Exception):  # a worker gone meanwhile
        names = {a: str(w.get("name", a)) for a, w in client.scheduler_info().get("workers", {}).items()}
        for address, isolation in client.run(_isolation, unisolated, ungrouped).items():
            name = names.get(address, address)
            found.setdefault(str(isolation), []).append(address if name == address else f"{name} ({address})")
    return found


async def _isolation(unisolated: bool = False, ungrouped: bool = False) -> str:
    """Run by ``client.run`` on the worker's event loop: the probe (it starts bwrap) goes to a thread."""
    import asyncio

    from ..sandbox import Sandbox
    from ..sandbox.policy import IsolationUnavailable

    def probe() -> str:
        try:
            return Sandbox(unisolated=unisolated, ungrouped=ungrouped).isolation
        except IsolationUnavailable as exc:
            return str(exc)

    return await asyncio.to_thread(probe)


def _takes_n_workers(client) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


class DaskRunner(Runner):
    """Grading tasks on the cluster behind ``client``; feedback tasks on ``jobs`` local processes."""

    def __init__(self, client, jobs: int = 2) -> None:
        super().__init__()
        self.client = client
        self.here = WorkerPool(jobs, self._report)
        self.run = uuid.uuid4().hex[:8]
        self._waiting: deque[GradeTask] = deque()
        self._outstanding: dict[str, Any] = {}  # key -> future, for cancelling
        self._threads, self._threads_at = 0, -1e9
        self._course: Course | None = None
        self._bundle: Any = None
        self._digest = self._package = ""

    def open(self, course: Course, template: Path) -> None:
        bundle = course_bundle(course, template)
        self._course, self._digest, self._package = (
            course,
            hashlib.sha256(bundle).hexdigest(),
            package_digest(),
        )
        with contextlib.suppress(Exception):  # a worker gone meanwhile; each task asks again
            self.client.run(stop_task_profiler)
        key = f"{_BUNDLE_KEY}-{self._digest[:16]}-{self.run}"
        self._bundle = self.client.submit(the_bundle, bundle, key=key, pure=False)

    def _queue(self, task: Task) -> None:
        if isinstance(task, FeedbackTask):
            self.here.add(task)
        else:
            self._waiting.append(task)

    def _dispatch(self) -> None:
        self.here.dispatch()
        if not self._waiting:
            return
        if time.monotonic() - self._threads_at > THREADS_EVERY:  # workers may join during the round
            self._threads, self._threads_at = describe(self.client)[1], time.monotonic()
        window = max(MIN_IN_FLIGHT, IN_FLIGHT_PER_THREAD * self._threads)
        while self._waiting and len(self._outstanding) < window:
            task = self._waiting.popleft()
            assert self._course is not None  # opened
            key = f"pe-grade-{self.run}-{task.student}"
            future = self.client.submit(
                grade_remote,
                self._bundle,
                self._digest,
                self._package,
                task.assignment,
                task.student,
                submission_archive(self._course, task.student),  # read only when it is sent
                task.fingerprint,
                task.unisolated,
                task.feedback,
                task.ungrouped,
                key=key,
                pure=False,
            )
            self._outstanding[key] = future
            future.add_done_callback(lambda f, task=task: self._report(task, f))

    def _take(self, task: Task, future: Any) -> None:
        if isinstance(task, FeedbackTask):
            outcome = self.here.take(task, future)
            if outcome is not None:
                self._finish(task, outcome)
            return
        assert isinstance(task, GradeTask)
        self._outstanding.pop(future.key, None)
        try:
            result: RemoteResult = future.result()
            self._finish(task, _received(result, Path(task.staging)))
        except Exception as exc:  # noqa: BLE001 (KilledWorker: the task's workers kept dying)
            self._finish(
                task, GradeOutcome(task.student, False, task.staging, task.fingerprint, error=_why(exc))
            )
        future.release()

    def cancel(self) -> None:
        """Queued and running tasks are cancelled (a student being graded on a worker finishes there
        and is thrown away)."""
        self._waiting.clear()
        with contextlib.suppress(Exception):  # the scheduler gone meanwhile
            self.client.cancel(list(self._outstanding.values()), force=True)
        self.here.stop()

    def close(self) -> None:
        if self._bundle is not None:
            self._bundle.release()
            with contextlib.suppress(Exception):  # a worker gone meanwhile: its temp dir went with it
                self.client.run(forget_bundle, self._digest)  # each worker's unpacked copy
        self.here.close()


def _received(result: RemoteResult, staging: Path) -> GradeOutcome:
    staging.mkdir(parents=True, exist_ok=True)
    if result.archive:  # a refused task (other code, no isolation) sends back only why
        untar(result.archive, staging)
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


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__

"""Worker processes on this machine: :class:`LocalRunner`, and the :class:`WorkerPool` it is made of.

Workers are fresh interpreters (``spawn``: nothing inherited from the caller) that never write to
the terminal. A few tasks per worker are in flight at a time, feedback tasks first, so that a
student's pages are not queued behind the whole class. A worker that dies (killed, out of memory)
breaks its pool: the pool is replaced and each task that was in it runs once more; a task lost twice
comes back failed.

Stopping (Ctrl-C, SIGTERM): every worker gets SIGTERM, which ends its sandboxes wherever it is
(:func:`pe_course.sandbox.teardown.stop_on_signal`); a worker that has not left after 15 s is killed,
and what it left (scratch directories, resource groups) is removed here.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import multiprocessing
import os
import signal
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from multiprocessing import resource_tracker
from typing import Any

from ..interruption import deferred
from ..round.runner import Outcome, Runner, Task, failed
from ..round.task import FeedbackTask, run_task
from ..sandbox import groups, leftovers, teardown
from ..sandbox.scratch import remove_tree

IN_FLIGHT_PER_WORKER = 2
STOP_GRACE = 15.0  # seconds a stopped worker gets to end its sandboxes before it is killed


class WorkerPool:
    """Local worker processes running tasks; each finished task's future goes to ``report``."""

    def __init__(self, jobs: int, report: Callable[[Task, cf.Future], None]) -> None:
        self.jobs = max(1, jobs)
        self.report = report
        self._feedback: deque[Task] = deque()
        self._grading: deque[Task] = deque()
        self._running: dict[cf.Future, cf.ProcessPoolExecutor] = {}  # future -> the pool it runs in
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lost_once: set[Task] = set()

    def add(self, task: Task) -> None:
        (self._feedback if isinstance(task, FeedbackTask) else self._grading).append(task)

    def dispatch(self) -> None:
        while (self._feedback or self._grading) and len(self._running) < IN_FLIGHT_PER_WORKER * self.jobs:
            task = (self._feedback or self._grading).popleft()
            # a worker being started is one stop_workers() finds; it starts deaf to the terminal's Ctrl-C
            # (blocked here, so from its first instruction: Python's start-up would print a traceback)
            with deferred():
                # started before SIGINT is blocked: starting multiprocessing's resource tracker unblocks
                # it in this thread (bpo-33613's mask, undone with SIG_UNBLOCK), so a worker spawned after
                # it heard the Ctrl-C while importing and printed a traceback
                resource_tracker.ensure_running()
                with sigint_blocked():
                    if self._pool is None:
                        self._pool = cf.ProcessPoolExecutor(
                            max_workers=self.jobs,
                            mp_context=multiprocessing.get_context("spawn"),
                            initializer=_worker_start,
                        )
                    future = self._pool.submit(run_task, task)
                    self._running[future] = self._pool
            future.add_done_callback(functools.partial(self.report, task))

    def take(self, task: Task, future: cf.Future) -> Outcome | None:
        """The task's outcome, or None when it was lost with a broken pool and is held to run again."""
        pool = self._running.pop(future, None)
        try:
            return future.result()
        except cf.process.BrokenProcessPool:  # a worker died: the pool and every task in it are gone
            if pool is not None and pool is self._pool:
                pool.shutdown(wait=False)
                self._pool = None  # a new one at the next dispatch
            if task in self._lost_once:
                kind = "feedback" if isinstance(task, FeedbackTask) else "grading"
                return failed(task, f"{kind} worker died twice")
            self._lost_once.add(task)
            self.add(task)
            return None
        except Exception as exc:  # noqa: BLE001 (reported as this task's failure; the others go on)
            return failed(task, repr(exc))

    def stop(self) -> None:
        stop_workers(self._pool)
        self._pool = None
        self._feedback.clear()
        self._grading.clear()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class LocalRunner(Runner):
    """A round's tasks on ``jobs`` local worker processes."""

    def __init__(self, jobs: int = 2) -> None:
        super().__init__()
        self.pool = WorkerPool(jobs, self._report)

    def _queue(self, task: Task) -> None:
        self.pool.add(task)

    def _dispatch(self) -> None:
        self.pool.dispatch()

    def _take(self, task: Task, future: Any) -> None:
        outcome = self.pool.take(task, future)
        if outcome is not None:
            self._finish(task, outcome)

    def cancel(self) -> None:
        self.pool.stop()

    def close(self) -> None:
        self.pool.close()


def _worker_start() -> None:
    """In each worker. The terminal's Ctrl-C reaches the whole process group, but only the main
    process acts on it (it then stops the workers with SIGTERM); SIGTERM ends the worker's sandboxes
    wherever it is. Workers never write to the terminal (the main process owns it: progress bars,
    summary); what nbgrader logs for a student comes back in that student's outcome."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since the spawn: now ignored
    teardown.stop_on_signal(signal.SIGTERM)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    warnings.filterwarnings("ignore", module="nbformat")  # students' notebooks often lack cell ids


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT held pending in this thread, and so in every process started from it (a signal mask is
    inherited through fork and exec); delivered here when the block ends."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def stop_workers(pool: cf.ProcessPoolExecutor | None) -> None:
    """End a pool at once: queued tasks dropped, every worker process (also one still starting) told
    to stop, given time to end its sandboxes, then killed; what a killed worker left is removed."""
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    workers = multiprocessing.active_children()
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + STOP_GRACE
    for worker in workers:
        worker.join(max(0.1, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join(5)
            if worker.pid is not None:
                for path in teardown.leftovers_of(worker.pid):
                    remove_tree(path)
                leftovers.remove_left_by(worker.pid, groups.mechanism())
    if pool is not None:
        pool.shutdown(wait=True)

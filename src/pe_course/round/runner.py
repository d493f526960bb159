"""The runner interface a grading round is written over.

The round (:func:`pe_course.round.grade.grade_round`) submits tasks — a
:class:`~pe_course.round.task.GradeTask` (one student's grades, with their feedback pages) or a
:class:`~pe_course.round.task.FeedbackTask` (a student's pages from the course gradebook) — and takes
each one back as it finishes, with :meth:`Runner.next_finished`. The runner decides where and when
they run, how many are in flight, and what a lost worker costs; a task that cannot be run comes back
as a failed outcome saying why. A runner never writes the gradebook.

Interruption is part of the contract: :meth:`Runner.cancel` stops every task at once, whatever state
it is in (the round calls it on Ctrl-C or SIGTERM and then commits what it has received), and leaves
no worker, sandbox or scratch directory of this runner behind.
"""

from __future__ import annotations

import queue
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import interruption
from ..course import Course
from .task import FeedbackOutcome, FeedbackTask, GradeOutcome, GradeTask

Task = GradeTask | FeedbackTask
Outcome = GradeOutcome | FeedbackOutcome


@dataclass
class Finished:
    task: Task
    outcome: Outcome


def failed(task: Task, why: str) -> Outcome:
    """The outcome of a task that could not be run (its worker died, the cluster lost it)."""
    if isinstance(task, GradeTask):
        return GradeOutcome(task.student, False, task.staging, task.fingerprint, error=why)
    return FeedbackOutcome(task.student, False, why)


class Runner(ABC):
    """Runs a round's tasks; see the module docstring. Use as a context manager: leaving it with an
    exception cancels what is still running."""

    def __init__(self) -> None:
        self._done: queue.Queue[tuple[Task, Any]] = queue.Queue()  # (task, its future) as each finishes
        self._ready: deque[Finished] = deque()
        self.unfinished = 0  # tasks submitted and not taken back yet

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if exc is not None:
            self.cancel()
        self.close()

    def open(self, course: Course, template: Path) -> None:  # noqa: B027 (most runners need nothing)
        """Before the round's first task: ``template`` is the private gradebook every task starts from."""

    def submit(self, task: Task) -> None:
        """Queue ``task``; it runs when the runner has room for it."""
        self.unfinished += 1
        self._queue(task)

    def next_finished(self) -> Finished:
        """The next task to finish, in the order they finish (waits for one)."""
        while not self._ready:
            interruption.check()
            self._dispatch()
            # a Ctrl-C while waiting is raised when the wait ends, not inside whatever else the main
            # thread runs meanwhile (a weakref callback would swallow it: see interruption.check)
            with interruption.deferred():
                try:
                    task, future = self._done.get(timeout=0.2)
                except queue.Empty:
                    continue
            self._take(task, future)
        self.unfinished -= 1
        return self._ready.popleft()

    def ready(self) -> bool:
        """Whether another task has finished already (the writer commits once none has)."""
        while not self._ready:
            try:
                task, future = self._done.get_nowait()
            except queue.Empty:
                return False
            self._take(task, future)
        return True

    def _report(self, task: Task, future: Any) -> None:
        """A future's done-callback (any thread): the main thread reads it in :meth:`_take`."""
        self._done.put((task, future))

    def _finish(self, task: Task, outcome: Outcome) -> None:
        self._ready.append(Finished(task, outcome))

    @abstractmethod
    def _queue(self, task: Task) -> None:
        """Hold ``task`` until :meth:`_dispatch` has room for it."""

    @abstractmethod
    def _dispatch(self) -> None:
        """Send held tasks to workers, as many as the runner keeps in flight (the main thread)."""

    @abstractmethod
    def _take(self, task: Task, future: Any) -> None:
        """Read a finished future: :meth:`_finish` the task, or hold it again to run once more."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop every task now (Ctrl-C, SIGTERM); idempotent."""

    @abstractmethod
    def close(self) -> None:
        """Release the workers at the end of the round."""

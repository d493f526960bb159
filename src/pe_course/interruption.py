"""Ctrl-C and ``kill <pid>`` in the instructor's process.

Once :func:`catch_signals` is installed (``pe-course`` does it first thing), SIGINT and SIGTERM both
raise ``KeyboardInterrupt``, and the round ends through its cleanup. The exception may come at any
point, so the few steps that must not be cut in half — starting a worker process, stopping the
workers, committing the results received, removing the round's scratch folder — run inside
:func:`deferred`, which holds the signal back until they are done.

The local workers are stopped differently: see :func:`pe_course.sandbox.teardown.stop_on_signal`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SignalHold:
    """A block during which a signal waits: ``with hold:`` (nested blocks count as one). A handler asks
    :meth:`keep` first; the signal kept is passed to ``act`` when the outermost block ends."""

    def __init__(self, act: Callable[[int], None]) -> None:
        self.act = act
        self.depth = 0  # blocks in progress
        self.held = 0  # the signal that arrived inside one

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc) -> None:
        self.depth -= 1
        if not self.depth and self.held:
            signum, self.held = self.held, 0
            self.act(signum)

    def keep(self, signum: int) -> bool:
        """In a signal handler: whether a block is in progress (the signal then waits for its end)."""
        if self.depth:
            self.held = signum
        return bool(self.depth)


_caught = [0]  # the signal caught, kept: its KeyboardInterrupt may have been swallowed (below)


def _raise_keyboard_interrupt(signum: int) -> None:
    _caught[0] = signum
    raise KeyboardInterrupt


def check() -> None:
    """Raise ``KeyboardInterrupt`` again if a signal was caught. A handler's exception is raised wherever
    the main thread happens to be; inside a weakref callback or a ``__del__`` Python only prints
    "Exception ignored" and goes on (seen: a Ctrl-C lost that way, the round graded to the end), so
    loops that wait call this."""
    if _caught[0]:
        raise KeyboardInterrupt


def _on_unraisable(unraisable) -> None:
    """A ``KeyboardInterrupt`` Python could not raise (it came inside a weakref callback or a
    ``__del__``): not printed as "Exception ignored", and the signal sent again shortly, to be raised
    where it can be (the waiting loops also call :func:`check`)."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt) and _caught[0]:
        again = threading.Timer(0.05, os.kill, (os.getpid(), _caught[0]))
        again.daemon = True
        again.start()
        return
    sys.__unraisablehook__(unraisable)


_HOLD = SignalHold(_raise_keyboard_interrupt)


def catch_signals() -> None:
    """Ctrl-C and ``kill <pid>`` raise ``KeyboardInterrupt`` (held back inside :func:`deferred`).
    Call from the main thread."""
    _caught[0] = 0
    sys.unraisablehook = _on_unraisable
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)


def _on_signal(signum, frame) -> None:
    if not _HOLD.keep(signum):
        _raise_keyboard_interrupt(signum)


def deferred() -> contextlib.AbstractContextManager[None]:
    """A signal caught by :func:`catch_signals` inside this block raises when the block ends. Only
    the main thread is ever interrupted, so elsewhere this does nothing."""
    return _HOLD if threading.current_thread() is threading.main_thread() else contextlib.nullcontext()

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
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _State:
    depth = 0  # deferred() blocks in progress (main thread)
    held = 0  # a signal that arrived inside one


def catch_signals() -> None:
    """Ctrl-C and ``kill <pid>`` raise ``KeyboardInterrupt`` (held back inside :func:`deferred`).
    Call from the main thread."""
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)


def _on_signal(signum, frame) -> None:
    if _State.depth:
        _State.held = signum
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A signal caught by :func:`catch_signals` inside this block raises when the block ends. Only
    the main thread is ever interrupted, so elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if not _State.depth and _State.held:
            _State.held = 0
            raise KeyboardInterrupt

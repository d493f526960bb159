"""Preloaded by the test cluster's workers (``dask worker --preload``): if a worker's event loop stops
for :data:`STALL_SECONDS`, every thread's stack is written to ``stalls`` in the worker's folder.

A worker whose event loop stops sends no heartbeat, and the scheduler restarts it only after its
worker-ttl; the large class was seen to wait 537 s for one that way (2026-12-05), with nothing in the logs
to say where it stood. Python's faulthandler writes the stacks from its own C thread, so it does so
whatever holds the interpreter; the loop re-arms it every few seconds while it runs."""

from __future__ import annotations

import faulthandler
import os
from pathlib import Path

STALL_SECONDS = 45


def dask_setup(worker) -> None:
    from tornado.ioloop import PeriodicCallback

    out = (Path.cwd() / "stalls").open("a")
    seconds = float(os.environ.get("PE_TEST_STALL_SECONDS", STALL_SECONDS))

    def rearm() -> None:
        faulthandler.dump_traceback_later(seconds, file=out)

    rearm()
    # kept with the worker, started on its loop
    worker._pe_stall_watch = PeriodicCallback(rearm, 500 if seconds < 5 else 2000)
    worker._pe_stall_watch.start()

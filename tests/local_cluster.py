"""A Dask cluster for the tests: a `dask scheduler` and `dask worker` processes started here, each in a
directory that does not hold the course (as on a real cluster)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

DASK = Path(sys.executable).with_name("dask")
STALL_WATCH = Path(__file__).with_name("dask_stall_watch.py")
# A worker that sends no heartbeat for this long is restarted by the scheduler and its tasks run again
# elsewhere (Dask's default is 5 minutes). Heartbeats come every second or so, from the worker's event
# loop, which no task holds: a stalled loop is a fault, recorded by dask_stall_watch.py and reported by
# stalls().
WORKER_TTL = "90s"


class LocalCluster:
    """A scheduler and workers as separate `dask` processes (each its own session, so a kill takes the
    nanny, the worker and its sandboxes together), each in its own directory and TMPDIR."""

    def __init__(self, base: Path) -> None:
        self.base, self.procs = base, {}
        self.file = base / "scheduler.json"
        self._start(
            "scheduler",
            [str(DASK), "scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(self.file)],
            {"DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": WORKER_TTL},
        )
        deadline = time.monotonic() + 120
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert self.file.exists(), self._logs("scheduler")
        self.address = json.loads(self.file.read_text())["address"]

    def _start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        folder = self.base / name
        folder.mkdir(parents=True, exist_ok=True)
        log = open(folder / "log", "wb")  # noqa: SIM115 (closed with the process)
        self.procs[name] = (
            subprocess.Popen(
                argv,
                cwd=folder,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "TMPDIR": str(folder), **(env or {})},
                start_new_session=True,
            ),
            log,
        )

    def add_workers(self, *names: str, env: dict[str, str] | None = None) -> None:
        for name in names:
            self._start(
                name,
                [
                    str(DASK),
                    "worker",
                    "--scheduler-file",
                    str(self.file),
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--name",
                    name,
                    "--preload",
                    str(STALL_WATCH),
                ],
                env,
            )

    def wait_for_workers(self, client, n: int) -> None:
        deadline = time.monotonic() + 180
        while len(client.scheduler_info()["workers"]) < n:
            assert time.monotonic() < deadline, self._logs(*self.procs)
            time.sleep(0.3)

    def kill(self, name: str) -> None:
        proc, _ = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def close(self) -> None:
        for proc, _ in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc, log in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()

    def stalls(self) -> dict[str, str]:
        """Per worker whose event loop stalled (see dask_stall_watch.py): the stacks written then."""
        found = {}
        for path in sorted(self.base.glob("*/stalls")):
            text = path.read_text(errors="replace")
            if text.strip():
                found[path.parent.name] = text
        return found

    def _logs(self, *names: str) -> str:
        return "\n".join((self.base / n / "log").read_text(errors="replace")[-3000:] for n in names)


def connect(cluster: LocalCluster, workers: int):
    """A client of ``cluster`` once ``workers`` workers have joined."""
    from pe_course.runners.dask_cluster import connect as connect_to

    client = connect_to(cluster.address)
    cluster.wait_for_workers(client, workers)
    return client

"""Grader-side handle on a submission's code running in the sandboxed worker.

``StudentProcess(cells, functions).call("embed", ids, tok, pos)`` returns an :class:`Outcome`:
a decoded plain value, the name of the exception the student's code raised, or a time-out /
crash / missing function. Nothing the worker sends is trusted: messages are size-limited,
decoded strictly (``codec.decode_untrusted``) and never executed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..public_checks import (
    Outcome,  # what one call of a student function gave (shared with the public checks)
)
from . import wire
from .channel import LineReader
from .inside import FOLDER as INSIDE
from .inside import codec
from .isolation import Sandbox, SandboxedProcess
from .scratch import write_file
from .usage import Usage, strays

MAX_RESTARTS = 4
MAX_UPSTREAM_CALLS = 64  # stand-in calls answered during one graded call


@dataclass
class LoadReport:
    """What happened while the worker executed the submission's cells."""

    functions: dict[str, str] = field(default_factory=dict)  # name -> ok | missing | not-callable
    cell_errors: list[dict] = field(default_factory=list)  # {index, error, message, line}
    timed_out_cells: list[int] = field(default_factory=list)
    crashed: bool = False
    usage: Usage = field(default_factory=Usage)  # the worker's resource groups, over all its restarts


class StudentProcess:
    """Runs ``cells`` (plain code strings, in order) in a sandboxed worker and answers calls."""

    def __init__(
        self,
        cells: list[str],
        functions: list[str],
        sandbox: Sandbox | None = None,
        files: dict[str, bytes] | None = None,
    ) -> None:
        self.cells = list(cells)
        self.functions = list(functions)
        self.sandbox = sandbox or Sandbox()
        # the assignment's data files (name -> content), beside the code in the scratch directory as
        # they are beside the notebook in the student's JupyterLab; written read-only for every (re)start
        self.files = dict(files or {})
        for name in self.files:
            if "/" in name or name.startswith(".") or name in ("worker.py", "codec.py"):
                raise ValueError(f"not a data file name for the scratch directory: {name!r}")
        self.report = LoadReport()
        self._skip: set[int] = set()
        self._bad_functions: dict[str, str] = {}  # fn -> timeout | crashed
        self._proc: SandboxedProcess | None = None
        self._reader: LineReader | None = None
        self._next_id = 0
        self._restarts = 0
        self._scratch_cm: contextlib.AbstractContextManager[Path] | None = None
        self._scratch: Path | None = None
        self.deadline: float | None = None  # monotonic time after which every call times out
        # dependent function -> (upstream name, trusted upstream implementation): while the dependent
        # is called, its calls to the upstream name are answered with this implementation's values
        self.upstream: dict[str, tuple[str, Any]] = {}
        self._seen_hits: set[str] = set()
        self._limit_messages: dict[str, str] = {}  # fn -> the group limit it went over

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> StudentProcess:
        try:
            self.start()
        except BaseException:  # `with` calls __exit__ only after __enter__ returned
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> LoadReport:
        self._load()
        return self.report

    def close(self) -> None:
        self._stop()
        if self._scratch_cm is not None:
            self._scratch_cm.__exit__(None, None, None)
            self._scratch_cm = None

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self.report.usage.merge(self._proc.usage)
            self._proc = None
        self._reader = None

    def _note_strays(self) -> None:
        """Processes the submission's cells started and left running: shown to the instructor."""
        if self._proc is None or self._proc.group is None:
            return
        if strays(self._proc.group.pids(), self._proc.proc.pid):
            self.report.usage.hits = list(dict.fromkeys([*self.report.usage.hits, "background"]))

    def _new_hits(self) -> list[str]:
        """Group limits the worker went over since the last look (none without resource groups)."""
        group = self._proc.group if self._proc is not None else None
        if group is None:
            return []
        hits = [h for h in group.poll() if h not in self._seen_hits]
        self._seen_hits.update(hits)
        return hits

    def _spawn(self) -> None:
        # a fresh scratch directory for every (re)start: nothing a previous run planted is reused
        if self._scratch_cm is not None:
            self._scratch_cm.__exit__(None, None, None)
        self._scratch_cm = self.sandbox.scratch()
        self._scratch = self._scratch_cm.__enter__()
        self._seen_hits = set()
        for name in ("worker.py", "codec.py"):
            write_file(self._scratch, name, (INSIDE / name).read_bytes())
        for name, data in self.files.items():
            write_file(self._scratch, name, data, mode=0o444)
        argv = [sys.executable, "-E", "-s", "-B", self.sandbox.inside(self._scratch, "worker.py")]
        self._proc = self.sandbox.start(
            argv, self._scratch, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self._proc.proc.stdout is not None and self._proc.proc.stdin is not None  # both are pipes
        self._reader = LineReader(self._proc.proc.stdout.fileno(), wire.MAX_MESSAGE_BYTES)
        fd = self._proc.proc.stdin.fileno()
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)

    def _load(self) -> None:
        """(Re)start the worker and execute the cells, skipping cells that hung before."""
        limits = self.sandbox.limits
        while True:
            self._stop()
            self._spawn()
            cells = [{"index": i, "source": src} for i, src in enumerate(self.cells) if i not in self._skip]
            deadline = time.monotonic() + limits.load_timeout
            current = None
            try:
                self._send({"op": "load", "cells": cells, "functions": self.functions}, deadline)
                while True:
                    message = self._receive(min(deadline, time.monotonic() + limits.call_timeout))
                    hits = self._new_hits()
                    if hits and isinstance(current, int) and current not in self._skip:
                        self._skip.add(current)  # the cell went over a group limit: run again without it
                        self.report.cell_errors.append(
                            {
                                "index": current,
                                "error": "BatasSumberDaya",
                                "message": limits.exceeded(hits),
                                "line": None,
                            }
                        )
                        break
                    if message.get("event") == "cell":
                        current = message.get("index")
                        continue
                    if message.get("event") == "loaded":
                        self._accept_load(message)
                        self._note_strays()
                        return
                    raise wire.Crashed("unexpected message")
                continue
            except wire.Timeout:
                if (
                    isinstance(current, int)
                    and current not in self._skip
                    and len(self._skip) < len(self.cells)
                ):
                    self._skip.add(current)
                    self.report.timed_out_cells.append(current)
                    continue  # run the submission again without the cell that hung
                self._fail_load()
                return
            except wire.Crashed:
                if (
                    isinstance(current, int)
                    and current not in self._skip
                    and len(self._skip) < len(self.cells)
                ):
                    self._skip.add(current)  # the cell killed the worker (os._exit, segfault, memory)
                    hits = self._new_hits()
                    self.report.cell_errors.append(
                        {
                            "index": current,
                            "error": "BatasSumberDaya" if hits else "ProsesBerhenti",
                            "message": limits.exceeded(hits) if hits else "sel menghentikan proses",
                            "line": None,
                        }
                    )
                    continue
                self._fail_load()
                return

    def _accept_load(self, message: dict) -> None:
        functions = message.get("functions")
        errors = message.get("errors")
        if not isinstance(functions, dict) or not isinstance(errors, list):
            raise wire.Crashed("bad load report")
        self.report.functions = {
            name: str(functions.get(name))
            if functions.get(name) in ("ok", "missing", "not-callable")
            else "missing"
            for name in self.functions
        }
        clean = []
        for err in errors[:200]:
            if isinstance(err, dict):
                clean.append(
                    {
                        "index": err.get("index") if isinstance(err.get("index"), int) else None,
                        "error": str(err.get("error", ""))[:80],
                        "message": str(err.get("message", ""))[:600],
                        "line": err.get("line") if isinstance(err.get("line"), int) else None,
                    }
                )
        self.report.cell_errors.extend(clean)

    def _fail_load(self) -> None:
        self._stop()
        self.report.crashed = True
        self.report.functions = {name: "missing" for name in self.functions}

    # -- calls -------------------------------------------------------------------------------
    def status(self, fn: str) -> str:
        """ok | missing | not-callable | timeout | crashed | limit for a function of the submission."""
        return self._bad_functions.get(fn) or self.report.functions.get(fn, "missing")

    def call(self, fn: str, *args: Any, **kwargs: Any) -> Outcome:
        if self.deadline is not None and time.monotonic() > self.deadline:
            return Outcome("timeout", message="waktu penilaian untuk notebook ini habis")
        status = self.status(fn)
        if status == "timeout":
            return Outcome("timeout", message="fungsi melewati batas waktu pada pemanggilan sebelumnya")
        if status == "crashed":
            return Outcome("crashed", message="fungsi menghentikan proses pada pemanggilan sebelumnya")
        if status == "limit":
            return Outcome("limit", message=self._limit_messages.get(fn, ""))
        if status != "ok":
            return Outcome("missing", message=status)
        if self._proc is None:
            if self._restarts >= MAX_RESTARTS:
                return Outcome("crashed", message="proses siswa terlalu sering berhenti")
            self._restarts += 1
            self._load()
            if self.status(fn) != "ok":
                return Outcome("crashed", message="proses siswa tidak dapat dijalankan ulang")
        self._next_id += 1
        upstream = self.upstream.get(fn)
        request = {
            "op": "call",
            "id": self._next_id,
            "fn": fn,
            "upstream": upstream[0] if upstream else None,
            "args": codec.encode(list(args)),
            "kwargs": {k: codec.encode(v) for k, v in kwargs.items()},
        }
        deadline = time.monotonic() + self.sandbox.limits.call_timeout
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
        try:
            self._send(request, deadline)
            message = self._receive(deadline)
            served = 0
            while upstream and message.get("event") == "upstream" and served < MAX_UPSTREAM_CALLS:
                served += 1
                self._send(wire.serve_upstream(upstream[1], message), deadline)
                message = self._receive(deadline)
        except wire.Timeout:
            if self._over_limit(fn):
                return Outcome("limit", message=self._limit_messages[fn])
            self._stop()
            self._bad_functions[fn] = "timeout"
            return Outcome(
                "timeout", message=f"tidak selesai dalam {self.sandbox.limits.call_timeout:g} detik"
            )
        except wire.Crashed as exc:
            if self._over_limit(fn):
                return Outcome("limit", message=self._limit_messages[fn])
            self._stop()
            self._bad_functions[fn] = "crashed"
            return Outcome("crashed", message=str(exc))
        if self._over_limit(fn):
            return Outcome("limit", message=self._limit_messages[fn])
        if message.get("event") == "result" and message.get("error") == "MemoryError":
            return self._out_of_memory(fn)
        return self._outcome(message)

    def _out_of_memory(self, fn: str) -> Outcome:
        """A call that ran out of memory inside the worker (the per-process address-space limit met
        before the group's): a memory limit like the group's, so the status does not depend on which
        of the two a run meets first. The worker is ended and this function is not run again."""
        self._limit_messages[fn] = self.sandbox.limits.exceeded(["address-space"])
        self._bad_functions[fn] = "limit"
        self._stop()
        return Outcome("limit", message=self._limit_messages[fn])

    def _over_limit(self, fn: str) -> bool:
        """Did this call take the worker over a group limit? Then the call fails, the worker (and all
        it started) is ended, and the next call starts a fresh one; this function is not run again."""
        hits = self._new_hits()
        if not hits:
            return False
        self._limit_messages[fn] = self.sandbox.limits.exceeded(hits)
        self._bad_functions[fn] = "limit"
        self._stop()
        return True

    def _outcome(self, message: dict) -> Outcome:
        if message.get("event") != "result" or message.get("id") != self._next_id:
            self._stop()
            return Outcome("invalid", message="balasan tidak sesuai protokol")
        if message.get("ok") is True:
            try:
                return Outcome("value", value=codec.decode_untrusted(message.get("value")))
            except codec.DecodeError as exc:
                return Outcome("invalid", message=str(exc))
        error = str(message.get("error", "Exception"))[:80]
        text = str(message.get("message", ""))[:600]
        if error == "__unsupported__":
            return Outcome("invalid", message=text)
        return Outcome("raised", error=error, message=text)

    # -- wire --------------------------------------------------------------------------------
    def _send(self, message: dict, deadline: float) -> None:
        assert self._proc is not None and self._proc.proc.stdin is not None
        wire.send(self._proc.proc.stdin.fileno(), message, deadline)

    def _receive(self, deadline: float) -> dict:
        assert self._proc is not None and self._reader is not None
        return wire.receive(self._reader, deadline)

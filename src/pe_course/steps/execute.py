"""Execute: run a student's notebook inside the sandbox for the outputs the feedback shows.

:class:`SandboxedExecute` replaces nbgrader's ``Execute``: nbclient and the kernel run together in one
sandboxed process per student (the kernel is reset between that student's notebooks), in its own
resource group; the executed notebook comes back as a file parsed as untrusted data: only outputs are
taken (by cell index, with safe MIME types), never sources or metadata. Scores do not come from here
(see :mod:`pe_course.engine.grade`).
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import logging
import shutil
import subprocess
import sys
import time

import nbformat
from nbgrader.preprocessors import Execute
from traitlets import Float

from ..course.datafiles import sandbox_data_files
from ..course.notebooks import is_test_cell
from ..record import NoteKind
from ..sandbox import Sandbox, Usage, prefork, read_file, sharing, write_file
from ..sandbox.channel import LineClosed, LineReader, LineTimeout, LineTooLong
from ..sandbox.inside import FOLDER as INSIDE
from ..sandbox.usage import strays
from .notes import add_note
from .sandbox_config import DEFAULT, sandbox_from_config

PENDING = "Sel tes ini belum dinilai oleh grader tersembunyi."
SAFE_MIME = ("text/plain", "image/png", "image/jpeg")
MAX_RESULT_BYTES = 64 * 1024 * 1024
log = logging.getLogger(__name__)


class _Runner:
    """One sandboxed ``nbexec.py`` serving the notebooks of one student (see nbexec's docstring)."""

    def __init__(self, sandbox: Sandbox, key) -> None:
        self.sandbox, self.key, self.count = sandbox, key, 0
        self.usage: Usage | None = None  # the resource group's figures for the last notebook run
        self.leftover = False  # the last notebook left processes running: this runner is not reused
        self.reply_error: str | None = None  # why the runner could not write the last result, as it says
        self._scratch_cm = sandbox.scratch()
        self.scratch = self._scratch_cm.__enter__()
        try:
            forked = prefork.start_runner(sandbox, self.scratch)  # its nbexec is the zygote's, imported
            if forked is not None:
                self.proc = forked
            else:
                write_file(
                    self.scratch,
                    "nbexec.py",
                    (INSIDE / "nbexec.py").read_bytes(),
                )
                argv = [sys.executable, "-E", "-s", "-B", sandbox.inside(self.scratch, "nbexec.py")]
                self.proc = sandbox.start(
                    argv,
                    self.scratch,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
        except BaseException:  # never half made: nobody else holds this runner yet
            self._scratch_cm.__exit__(None, None, None)
            raise

    def alive(self) -> bool:
        return self.proc.proc.poll() is None

    def close(self) -> None:
        self.proc.kill()
        self._scratch_cm.__exit__(None, None, None)

    def run(self, nb, cell_timeout: int, total: float, files: dict[str, bytes] | None = None):
        """(executed notebook or None, problem or None).

        ``files``: the assignment's data files, put beside the notebook (the kernel's working directory)
        as they are in the student's JupyterLab; written afresh, read-only, before every notebook, so
        that what the student's previous notebook did to them does not reach this one.

        The scratch directory is shared with the student's kernel, which can plant anything there:
        files are written with ``write_file`` and read with ``read_file`` (no symlinks followed).
        """
        self.count += 1
        name = f"nb{self.count}"
        group = self.proc.group
        if group is not None:
            group.reset()  # this notebook's peaks and CPU, not the previous one's
        for data_name, content in (files or {}).items():
            if "/" in data_name or data_name.startswith(".") or data_name.endswith((".ipynb", ".py")):
                raise ValueError(f"not a data file name for the scratch directory: {data_name!r}")
            write_file(self.scratch, data_name, content, mode=0o444)
        write_file(self.scratch, f"{name}.in.ipynb", nbformat.writes(nb).encode())
        request = {
            "in": self.sandbox.inside(self.scratch, f"{name}.in.ipynb"),
            "out": self.sandbox.inside(self.scratch, f"{name}.out.ipynb"),
            "cell_timeout": cell_timeout,
            "total": max(5, int(total) - 5),
        }
        problem = None
        assert self.proc.proc.stdin is not None and self.proc.proc.stdout is not None  # pipes
        try:
            self.proc.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.proc.stdin.flush()
            reader = LineReader(self.proc.proc.stdout.fileno(), 65536)
            answered, self.reply_error = _wait_line(reader, total)
        except (BrokenPipeError, OSError):
            answered, self.reply_error = "closed", None
        self.usage = group.usage() if group is not None else None
        if self.usage is not None and group is not None and strays(group.pids(), self.proc.roots):
            # processes the notebook started are still running: they must not reach the next notebook
            self.usage.hits.append("background")
            self.leftover = True
        if self.usage is not None and self.usage.hits:
            problem = self.sandbox.limits.exceeded(self.usage.hits)
        elif answered == "timeout":
            problem = f"melewati batas waktu {total:g} detik untuk seluruh notebook"
        elif answered == "closed":
            problem = "proses notebook berhenti sebelum selesai"
        elif read_file(self.scratch, f"{name}.out.ipynb.incomplete", 0) is not None:
            problem = "dihentikan sebelum semua sel selesai (batas waktu notebook atau kernel mati)"
        data = read_file(self.scratch, f"{name}.out.ipynb", MAX_RESULT_BYTES)
        executed = None
        if data is None:
            problem = problem or "hasil eksekusi tidak ditemukan"
            if self.reply_error:  # what the runner said (untrusted: shown only in the grader's log)
                log.warning("The notebook runner could not write its result: %r", self.reply_error)
        else:
            try:
                executed = nbformat.reads(data.decode("utf-8"), as_version=4)
            except Exception:  # noqa: BLE001 (untrusted file)
                problem = problem or "hasil eksekusi tidak dapat dibaca"
        for leftover in self.scratch.glob(f"{name}.*"):
            with contextlib.suppress(OSError):
                if leftover.is_dir() and not leftover.is_symlink():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()
        if executed is not None and len(executed.cells) != len(nb.cells):
            executed, problem = None, problem or "hasil eksekusi tidak cocok dengan notebook"
        return executed, problem


def _wait_line(reader: LineReader, timeout: float) -> tuple[str, str | None]:
    """Wait for the runner's one-line reply: ("line", the error it reports or None), ("timeout", None)
    or ("closed", None). The line is untrusted (the student's kernel shares the runner's sandbox)."""
    try:
        line = reader.read_line(time.monotonic() + timeout)
    except LineTimeout:
        return "timeout", None
    except (LineClosed, LineTooLong):
        return "closed", None
    try:
        error = json.loads(line).get("error")
    except (ValueError, AttributeError):
        error = None
    return "line", error[:500] if isinstance(error, str) else None


_RUNNER: _Runner | None = None


def _runner_for(key, sandbox: Sandbox) -> _Runner:
    global _RUNNER
    if _RUNNER is not None and key is not None and _RUNNER.key == key and _RUNNER.alive():
        return _RUNNER
    close_runner()
    _RUNNER = _Runner(sandbox, key)
    return _RUNNER


def close_runner() -> None:
    """End the current student's sandboxed notebook runner (also at interpreter exit)."""
    global _RUNNER
    if _RUNNER is not None:
        _RUNNER.close()
        _RUNNER = None


atexit.register(close_runner)


class SandboxedExecute(Execute):
    """nbgrader's Execute step, but the notebook runs inside the sandbox.

    nbclient and the kernel run together in one sandboxed process, one per student (its kernel is
    reset between that student's notebooks); the executed notebook comes back as a file that is
    parsed as untrusted data: only outputs are taken (by cell index, with safe MIME types), never
    sources or metadata. Test cells are not run here (their hidden part never enters the student's
    kernel); they get a placeholder error until the graders score them.
    """

    notebook_timeout = Float(
        DEFAULT.notebook_timeout, help="Wall-clock limit (seconds) for running one whole notebook."
    ).tag(config=True)

    def preprocess(self, nb, resources, km=None):
        sandbox = sandbox_from_config(self)  # no isolation and no opt-in: raises, the run stops
        to_run = copy.deepcopy(nb)
        for cell in to_run.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
                if is_test_cell(cell):
                    cell.source = ""
        info = resources.get("nbgrader") if isinstance(resources, dict) else None
        key = (info.get("assignment"), info.get("student")) if info else None
        with sharing.exclusive(bool(sandbox.use_groups)):  # without a group: one run at a time
            try:
                files = sandbox_data_files(self.config, info["assignment"], self.log) if info else {}
                runner = _runner_for(key, sandbox)
                executed, problem = runner.run(
                    to_run, int(self.timeout or 30), sandbox.limits.notebook_timeout, files
                )
                if runner.usage is not None and isinstance(resources, dict):
                    resources["pe_course_execute_usage"] = sandbox.limits.record(runner.usage)
            except Exception as exc:  # noqa: BLE001 (whatever happened, the student is still graded)
                self.log.error("Sandboxed execution failed: %s", exc)
                executed, problem = None, f"eksekusi gagal ({type(exc).__name__})"
            if problem or key is None or (_RUNNER is not None and _RUNNER.leftover):
                close_runner()
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if is_test_cell(cell):
                cell.outputs = [_error_output("BelumDinilai", PENDING)]
                cell.execution_count = None
                continue
            theirs = executed.cells[index] if executed is not None else None
            cell.outputs = _safe_outputs(theirs.get("outputs", [])) if theirs is not None else []
            count = theirs.get("execution_count") if theirs is not None else None
            cell.execution_count = count if isinstance(count, int) else None
        if problem:
            add_note(nb, NoteKind.EXECUTION, problem)
            first = next((c for c in nb.cells if c.cell_type == "code" and not is_test_cell(c)), None)
            if first is not None:
                first.outputs.insert(
                    0,
                    nbformat.v4.new_output(
                        "stream",
                        name="stdout",
                        text=f"[Catatan penilai] Notebook tidak selesai dijalankan: {problem}\n",
                    ),
                )
        return nb, resources


def _error_output(ename: str, evalue: str):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _safe_outputs(outputs) -> list:
    """Untrusted outputs → plain text, images and errors only (no HTML/JS reaches formgrader);
    consecutive pieces of the same stream joined."""
    safe: list = []
    if not isinstance(outputs, list):
        return safe
    for out in outputs[:200]:
        kind = out.get("output_type") if isinstance(out, dict) else None
        if kind == "stream" and out.get("name") in ("stdout", "stderr") and isinstance(out.get("text"), str):
            last = safe[-1] if safe else None
            if last is not None and last.output_type == "stream" and last.name == out["name"]:
                # one block, as Jupyter shows it: how the kernel split the text into messages is timing
                last.text += out["text"]
            else:
                safe.append(nbformat.v4.new_output("stream", name=out["name"], text=out["text"]))
        elif kind in ("display_data", "execute_result") and isinstance(out.get("data"), dict):
            data = {k: v for k, v in out["data"].items() if k in SAFE_MIME and isinstance(v, str)}
            if data:
                safe.append(nbformat.v4.new_output("display_data", data=data))
        elif kind == "error":
            ename, evalue = str(out.get("ename", "Error"))[:200], str(out.get("evalue", ""))[:2000]
            tb = (
                [str(t)[:4000] for t in out.get("traceback", [])[:50]]
                if isinstance(out.get("traceback"), list)
                else []
            )
            safe.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=tb))
    return safe

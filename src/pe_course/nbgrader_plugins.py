"""nbgrader plug-ins: plain ``nbgrader autograde`` runs submissions in the sandbox and scores the
``test_<function>`` cells with the hidden graders.

Configured in ``nbgrader_config.py``::

    c.Autograde.exporter_class = "pe_course.nbgrader_plugins.TolerantNotebookExporter"
    c.Autograde.sanitize_preprocessors = nbgrader_plugins.SANITIZE_PREPROCESSORS
    c.Autograde.autograde_preprocessors = nbgrader_plugins.AUTOGRADE_PREPROCESSORS

Sanitize: unreadable notebooks are replaced by the released stub (scored 0, original kept in
``submitted/``), broken nbgrader metadata is repaired from the gradebook instead of aborting the
run, deleted test cells are restored.  Autograde: :class:`SandboxedExecute` runs the notebook
(nbclient and kernel together) in the sandbox — the student's kernel never sees the gradebook,
the course files or site-packages — and :class:`ScoreWithGraders` replaces each test cell's
outputs with the graders' score (an ``execute_result``) and feedback (markdown, never stderr).
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import os
import select
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.nbgraderformat import MetadataValidator, SchemaTooNewError, SchemaTooOldError, ValidationError
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    DeduplicateIds,
    Execute,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from nbgrader.utils import is_grade, is_locked, is_solution
from traitlets import Float, Int, Unicode
from traitlets.config import LoggingConfigurable

from . import cgroups
from .feedback import RenderMath, cell_markdown, cell_text
from .grading import grade_notebook, load_suite
from .notebook import grade_id, is_test_cell, load_reference
from .record import CellResult, CellStatus, GradingRecord, Note, NoteKind
from .sandbox import Limits, MiB, Sandbox, read_file, write_file

NOTES_KEY = "pe_course"
PENDING = "Sel tes ini belum dinilai oleh grader tersembunyi."
SAFE_MIME = ("text/plain", "image/png", "image/jpeg")
MAX_RESULT_BYTES = 64 * 1024 * 1024


def _add_note(nb: Any, kind: NoteKind, detail: str) -> None:
    """A note for the grading record, carried in the notebook's metadata between preprocessors."""
    nb.metadata.setdefault(NOTES_KEY, {}).setdefault("notes", []).append({"kind": kind.value, "detail": detail})


def _notes(nb: Any) -> list[Note]:
    return [n for n in map(Note.parse, nb.metadata.get(NOTES_KEY, {}).get("notes", [])) if n is not None]


# --------------------------------------------------------------------------------------------
# Sanitize
# --------------------------------------------------------------------------------------------
def read_submission(filename) -> Any:
    """Read a submitted notebook, repairing what nbformat can repair; raise if it is not a notebook."""
    with open(filename, encoding="utf-8") as f:
        nb = nbformat.read(f, as_version=4)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError:
        _, repaired = nbformat.validator.normalize(nb, strip_invalid_metadata=True)
        nb = nbformat.from_dict(repaired)
        nbformat.validate(nb)
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a notebook: no cells")
    return nb


class TolerantNotebookExporter(NotebookExporter):
    """Reads a submission; an unreadable one becomes the released stub plus a note."""

    def from_filename(self, filename, resources=None, **kw):
        try:
            nb = read_submission(filename)
            if getattr(self.parent, "_sanitizing", False):
                nb.metadata.pop(NOTES_KEY, None)  # notes come from us, never from the submission
        except Exception as exc:  # noqa: BLE001 (any unreadable file: empty, not JSON, not a notebook)
            stub = self._release_copy(filename, resources)
            if stub is None:
                raise
            self.log.warning("Unreadable notebook %s (%s); grading the released stub instead", filename, exc)
            with open(stub, encoding="utf-8") as f:
                nb = nbformat.read(f, as_version=4)
            _add_note(nb, NoteKind.UNREADABLE_NOTEBOOK, f"{type(exc).__name__}: {str(exc)[:200]}")
        return self.from_notebook_node(nb, resources=resources, **kw)

    def _release_copy(self, filename, resources) -> Path | None:
        info = (resources or {}).get("nbgrader", {})
        if not info:
            return None
        coursedir = CourseDirectory(config=self.config)
        path = Path(coursedir.format_path(coursedir.release_directory, ".", info["assignment"])) / (
            Path(filename).name
        )
        return path if path.exists() else None


class RepairMetadata(NbGraderPreprocessor):
    """Repairs nbgrader cell metadata that would make nbgrader abort the whole run.

    Old schema versions are upgraded; unknown (newer) versions and invalid metadata are rebuilt from
    the gradebook for known grade ids and dropped otherwise. Each repair is noted for the record.
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        course_id = CourseDirectory(config=self.config).course_id or "default_course"
        with Gradebook(info["db_url"], course_id=course_id) as gb:
            try:
                known = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                known = None
            sources = {c.name: c for c in known.source_cells} if known else {}
            grades = {c.name: c for c in known.grade_cells} if known else {}
            solutions = {c.name for c in known.solution_cells} if known else set()
            for index, cell in enumerate(nb.cells):
                self._repair(nb, index, cell, sources, grades, solutions)
        return nb, resources

    def _repair(self, nb, index, cell, sources, grades, solutions) -> None:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            return
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        problem = None
        validator = MetadataValidator()
        try:
            if not isinstance(meta, dict):
                raise ValidationError("metadata is not a dict")
            validator.upgrade_cell_metadata(cell)
            validator.validate_cell(cell)
        except (SchemaTooNewError, SchemaTooOldError, ValidationError, KeyError, TypeError, AttributeError) as exc:
            problem = f"{type(exc).__name__}: {str(exc)[:120]}"
        if not (isinstance(gid, str) and gid in sources):
            if problem or gid is not None:  # a cell the assignment does not have: an ordinary cell
                del cell.metadata["nbgrader"]
                _add_note(nb, NoteKind.DROPPED_METADATA, f"cell {index} ({str(gid)[:60]!r}): {problem or 'unknown grade id'}")
            return
        src = sources[gid]
        expected = {"grade": gid in grades, "solution": gid in solutions, "locked": bool(src.locked),
                    "grade_id": gid, "schema_version": 3, "task": False}
        if gid in grades:
            expected["points"] = grades[gid].max_score
        current = cell.metadata["nbgrader"]
        flags_changed = any(current.get(k) != v for k, v in expected.items() if k not in ("schema_version", "task"))
        if problem or flags_changed:  # the gradebook, not the submission, says what a cell is worth
            cell.metadata["nbgrader"] = expected
            _add_note(nb, NoteKind.REPAIRED_METADATA, f"cell {index} ({gid}): {problem or 'flags or points changed'}")
            self.log.warning("Repaired nbgrader metadata of cell %s (%s): %s", index, gid, problem or "flags")


class ForgetDuplicates(NbGraderPreprocessor):
    """After ``DeduplicateIds``: the earlier copies of a duplicated cell keep an empty ``nbgrader`` dict,
    which nbgrader later reads as an outdated schema and aborts the run; drop it and note the duplicate."""

    def preprocess(self, nb, resources):
        for index, cell in enumerate(nb.cells):
            if cell.metadata.get("nbgrader", None) == {}:
                del cell.metadata["nbgrader"]
                _add_note(nb, NoteKind.DUPLICATE_CELL, f"cell {index} repeats a graded or solution cell; the last copy counts")
        return nb, resources


class RobustOverwriteCells(OverwriteCells):
    """``OverwriteCells`` whose restoring of deleted grade cells survives deleted neighbours.

    nbgrader inserts a missing grade cell after the *previous source cell*, and fails with a
    KeyError when that cell was deleted too; here it goes after the nearest earlier cell that is
    still present (or first).
    """

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [c.name for c in source_nb.source_cells]
        grade_cells = {c.name: c for c in source_nb.grade_cells}
        solution_ids = {c.name for c in source_nb.solution_cells}
        for gid in order:
            if gid not in grade_cells or self._position(nb, gid) is not None:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", gid)
            source_cell = source_nb.source_cells[order.index(gid)]
            new = self.missing_cell_transform(source_cell, grade_cells[gid].max_score,
                                              is_solution=gid in solution_ids)
            at = 0
            for earlier in reversed(order[: order.index(gid)]):
                pos = self._position(nb, earlier)
                if pos is not None:
                    at = pos + 1
                    break
            nb.cells.insert(at, new)
            _add_note(nb, NoteKind.RESTORED_CELL, gid)
        return nb, resources

    def add_missing_task_cells(self, nb, resources):
        """As nbgrader's, but cells whose metadata DeduplicateIds emptied (no grade_id) are skipped
        instead of raising KeyError, which aborted the whole student."""
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [c.name for c in source_nb.source_cells]
        present = {grade_id(cell) for cell in nb.cells} - {None}
        for task in source_nb.task_cells:
            if task.name not in present:
                source_cell = source_nb.source_cells[order.index(task.name)]
                nb.cells.append(self.missing_cell_transform(source_cell, task.max_score, is_task=True))
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        self._restore_rubric(cell)
        return super().preprocess_cell(cell, resources, cell_index)

    def _restore_rubric(self, cell) -> None:
        """Put back the rubric (mark scheme) that generate_assignment stripped from a locked cell.

        nbgrader would restore it too, but it would log every student's untouched question cell as
        "changed"; a cell that differs from the source by more than its rubric still goes through
        nbgrader's check (and is reported and restored there).
        """
        gid = grade_id(cell)
        if not gid or not is_locked(cell):
            return
        try:
            source_cell = self.gradebook.find_source_cell(gid, self.notebook_id, self.assignment_id)
        except MissingEntry:
            return
        marks = ClearMarkScheme(parent=self)
        if marks.begin_mark_scheme_delimeter not in source_cell.source:
            return
        stripped = nbformat.v4.new_markdown_cell(source_cell.source)
        marks._remove_mark_scheme_region(stripped)
        if stripped.source == cell.source:
            cell.source = source_cell.source

    @staticmethod
    def _position(nb, gid):
        for i, cell in enumerate(nb.cells):
            if (is_grade(cell) or is_solution(cell) or is_locked(cell)) and grade_id(cell) == gid:
                return i
        return None


# --------------------------------------------------------------------------------------------
# Autograde
# --------------------------------------------------------------------------------------------
class ResourceGroups(LoggingConfigurable):
    """Limits on each sandboxed run as a whole (all its processes), in ``nbgrader_config.py``:
    ``c.ResourceGroups.memory_mib = 2048`` and so on. See ``pe_course.cgroups``."""

    memory_mib = Int(2048, help="Memory of one sandboxed run, all its processes together (MiB).").tag(config=True)
    processes = Int(64, help="Processes and threads one sandboxed run may have at once.").tag(config=True)
    cpu_seconds = Float(300.0, help="CPU seconds of one sandboxed run, all its processes together.").tag(
        config=True)
    scratch_files = Int(10_000, help="Files and folders a run may create in its scratch directory.").tag(config=True)
    scratch_mib = Int(512, help="Bytes a run may write to its scratch directory (MiB).").tag(config=True)


def _limits(config_owner) -> Limits:
    groups = ResourceGroups(config=config_owner.config)
    limits = Limits(notebook_timeout=float(config_owner.notebook_timeout), group_memory=groups.memory_mib * MiB,
                    group_processes=groups.processes, group_cpu_seconds=groups.cpu_seconds,
                    scratch_files=groups.scratch_files, scratch_bytes=groups.scratch_mib * MiB)
    call_timeout = getattr(config_owner, "call_timeout", None)
    return limits.scaled(call_timeout=float(call_timeout)) if call_timeout else limits


class _Runner:
    """One sandboxed ``nbexec.py`` serving the notebooks of one student (see nbexec's docstring)."""

    def __init__(self, sandbox: Sandbox, key) -> None:
        self.sandbox, self.key, self.count = sandbox, key, 0
        self.usage = None  # the resource group's figures for the last notebook run
        self.leftover = False  # the last notebook left processes running: this runner is not reused
        self._scratch_cm = sandbox.scratch()
        self.scratch = self._scratch_cm.__enter__()
        write_file(self.scratch, "nbexec.py", Path(__file__).with_name("nbexec.py").read_bytes())
        argv = [sys.executable, "-E", "-s", "-B", sandbox.inside(self.scratch, "nbexec.py")]
        self.proc = sandbox.start(argv, self.scratch, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)

    def alive(self) -> bool:
        return self.proc.proc.poll() is None

    def close(self) -> None:
        self.proc.kill()
        self._scratch_cm.__exit__(None, None, None)

    def run(self, nb, cell_timeout: int, total: float):
        """(executed notebook or None, problem or None).

        The scratch directory is shared with the student's kernel, which can plant anything there:
        files are written with ``write_file`` and read with ``read_file`` (no symlinks followed).
        """
        self.count += 1
        name = f"nb{self.count}"
        group = self.proc.group
        if group is not None:
            group.reset()  # this notebook's peaks and CPU, not the previous one's
        write_file(self.scratch, f"{name}.in.ipynb", nbformat.writes(nb).encode())
        request = {"in": self.sandbox.inside(self.scratch, f"{name}.in.ipynb"),
                   "out": self.sandbox.inside(self.scratch, f"{name}.out.ipynb"),
                   "cell_timeout": cell_timeout, "total": max(5, int(total) - 5)}
        problem = None
        try:
            self.proc.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.proc.stdin.flush()
            answered = _wait_line(self.proc.proc.stdout, total)
        except (BrokenPipeError, OSError):
            answered = "closed"
        self.usage = group.usage() if group is not None else None
        if group is not None and cgroups.strays(group.pids(), self.proc.proc.pid):
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


def _wait_line(stream, timeout: float) -> str:
    """Wait for the runner's one-line reply: "line", "timeout" or "closed"."""
    deadline = time.monotonic() + timeout
    fd, data = stream.fileno(), b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return "timeout"
        chunk = os.read(fd, 4096)
        if not chunk:
            return "closed"
        data += chunk
        if len(data) > 65536:
            return "closed"
    return "line"


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

    notebook_timeout = Float(120.0, help="Wall-clock limit (seconds) for running one whole notebook.").tag(
        config=True
    )

    def preprocess(self, nb, resources, km=None):
        sandbox = Sandbox(_limits(self))
        to_run = copy.deepcopy(nb)
        for cell in to_run.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
                if is_test_cell(cell):
                    cell.source = ""
        info = resources.get("nbgrader") if isinstance(resources, dict) else None
        key = (info.get("assignment"), info.get("student")) if info else None
        try:
            runner = _runner_for(key, sandbox)
            executed, problem = runner.run(to_run, int(self.timeout or 30), sandbox.limits.notebook_timeout)
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
            _add_note(nb, NoteKind.EXECUTION, problem)
            first = next((c for c in nb.cells if c.cell_type == "code" and not is_test_cell(c)), None)
            if first is not None:
                first.outputs.insert(0, nbformat.v4.new_output(
                    "stream", name="stdout", text=f"[Catatan penilai] Notebook tidak selesai dijalankan: {problem}\n"))
        return nb, resources


def _error_output(ename: str, evalue: str):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _safe_outputs(outputs) -> list:
    """Untrusted outputs → plain text, images and errors only (no HTML/JS reaches formgrader)."""
    safe = []
    if not isinstance(outputs, list):
        return safe
    for out in outputs[:200]:
        kind = out.get("output_type") if isinstance(out, dict) else None
        if kind == "stream" and out.get("name") in ("stdout", "stderr") and isinstance(out.get("text"), str):
            safe.append(nbformat.v4.new_output("stream", name=out["name"], text=out["text"]))
        elif kind in ("display_data", "execute_result") and isinstance(out.get("data"), dict):
            data = {k: v for k, v in out["data"].items() if k in SAFE_MIME and isinstance(v, str)}
            if data:
                safe.append(nbformat.v4.new_output("display_data", data=data))
        elif kind == "error":
            ename, evalue = str(out.get("ename", "Error"))[:200], str(out.get("evalue", ""))[:2000]
            tb = [str(t)[:4000] for t in out.get("traceback", [])[:50]] if isinstance(out.get("traceback"), list) else []
            safe.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=tb))
    return safe


class ScoreWithGraders(NbGraderPreprocessor):
    """Scores each ``test_<function>`` cell with the hidden graders and writes the JSON record."""

    graders_dir = Unicode("graders", help="Directory of the hidden graders (relative to the course root).").tag(
        config=True
    )
    notebook_timeout = Float(120.0, help="Wall-clock limit (seconds) for grading one notebook.").tag(config=True)
    call_timeout = Float(10.0, help="Wall-clock limit (seconds) for one call of a student's function.").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        root = Path(coursedir.root)
        try:
            suite = load_suite(root / self.graders_dir)
            reference = load_reference(Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])))
            result = grade_notebook(nb, info["notebook"], suite, reference, Sandbox(_limits(self)), notes=_notes(nb))
        except Exception:  # noqa: BLE001 (a grader failure must zero, never pass, and never stop the batch)
            self.log.error("Graders failed on %s/%s:\n%s", info["student"], info["notebook"], traceback.format_exc())
            result = GradingRecord(info["notebook"], [], "unknown", notes=[*_notes(nb), Note(NoteKind.GRADER_ERROR)])
        if isinstance(resources.get("pe_course_execute_usage"), dict):
            result.resources["execute"] = resources["pe_course_execute_usage"]
        graded = {c.grade_id: c for c in result.cells}
        for cell in nb.cells:
            gid = grade_id(cell)
            if not (is_test_cell(cell) and gid):
                continue
            cr = graded.get(gid)
            if cr is None:
                cr = CellResult(gid, gid.removeprefix("test_"), 0.0, float(cell.metadata.nbgrader.get("points", 0)),
                                CellStatus.ERROR)
                result.cells.append(cr)
            cell.outputs = score_outputs(cr)
        self._write_record(coursedir, info, result)
        return nb, resources

    @staticmethod
    def _write_record(coursedir, info, result: GradingRecord) -> None:
        result.student, result.assignment = info["student"], info["assignment"]
        folder = Path(coursedir.format_path(coursedir.autograded_directory, info["student"], info["assignment"]))
        result.write(folder / f"{info['notebook']}.grading.json")


def score_outputs(cell: CellResult) -> list:
    """Outputs nbgrader scores: feedback (markdown + text) then the partial credit as execute_result."""
    if cell.status == CellStatus.ERROR and not cell.checks:
        feedback = f"Sel {cell.grade_id} tidak dapat dinilai (kesalahan penilai); hubungi pengajar."
        return [nbformat.v4.new_output("display_data", data={"text/plain": feedback, "text/markdown": feedback}),
                nbformat.v4.new_output("execute_result", data={"text/plain": "0"}, execution_count=1)]
    return [
        nbformat.v4.new_output("display_data", data={"text/markdown": cell_markdown(cell),
                                                     "text/plain": cell_text(cell)}),
        nbformat.v4.new_output("execute_result", data={"text/plain": f"{cell.score:g}"}, execution_count=1),
    ]


SANITIZE_PREPROCESSORS = [RepairMetadata, ClearOutput, DeduplicateIds, ForgetDuplicates, OverwriteKernelspec,
                          RobustOverwriteCells, CheckCellMetadata]
AUTOGRADE_PREPROCESSORS = [SandboxedExecute, ScoreWithGraders, IgnorePattern, ClearMetadataPreprocessor,
                           LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# nbgrader's feedback shows test cells as restored from source/, hidden region included: strip it.
FEEDBACK_PREPROCESSORS = [GetGrades, ClearHiddenTests, RenderMath, CSSHTMLHeaderPreprocessor]

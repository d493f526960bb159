"""Generate the release with nbgrader and check that it is safe to hand to students.

A release notebook must contain no solution code and no hidden test text, every graded function
must be a stub that raises ``NotImplementedError``, and no notebook may carry outputs.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

from ..course import Course
from ..course.clauses import parse_contracts
from ..course.datafiles import PUBLIC_DIR, DataFileError, data_files
from ..course.notebooks import (
    HIDDEN_MARKER,
    SOLUTION_BEGIN,
    SOLUTION_END,
    grade_id,
    is_test_cell,
    nbgrader_meta,
)
from ..interruption import deferred
from .precision import same_file
from .public_files import engine_files, files_of

VOLATILE_CELL_KEYS = ("id",)
RUBRIC_HEADING = (
    "Rubrik penilaian"  # how every rubric in a question cell begins (docs/notebook-conventions.md)
)


class ReleaseError(RuntimeError):
    pass


def _data_problems(release_dir: Path, source_dir: Path) -> list[str]:
    problems = []
    try:
        released, sources = data_files(release_dir), data_files(source_dir)
    except DataFileError as exc:
        return [str(exc)]
    if set(released) != set(sources):
        problems.append(
            f"release data files {sorted(released)} differ from source data files {sorted(sources)}"
        )
    for name, data in released.items():
        if sources.get(name, data) != data:
            problems.append(f"{name}: the released copy differs from source/")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as archive:
                for member in archive.files:
                    archive[member]  # every array must load without pickle
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            problems.append(f"{name}: not a NumPy archive of plain arrays ({exc})")
    return problems


def generate_release(course: Course, dest_root: Path | None = None) -> Path:
    """Run nbgrader's generate_assignment; into ``dest_root/release`` when given (for comparisons)."""
    overrides = {}
    if dest_root is not None:
        overrides = {
            "CourseDirectory.release_directory": str(Path(dest_root) / "release"),
            "CourseDirectory.db_url": f"sqlite:///{Path(dest_root) / 'gradebook.db'}",
        }
    with deferred():  # nbgrader's apps swallow a KeyboardInterrupt as a failure: Ctrl-C waits for the end
        result = course.api(**overrides).generate_assignment(course.assignment, force=True)
    if not result["success"]:
        raise ReleaseError(
            f"nbgrader generate_assignment failed:\n{result.get('error') or result.get('log')}"
        )
    return (Path(dest_root) / "release" / course.assignment) if dest_root else course.release


def points_problems(source_dir: Path) -> list[str]:
    """Test cells whose nbgrader points differ from the sum of their function's clause points (the
    clauses, stated with their points in the notebook, are the one source of the points)."""
    problems = []
    for path in sorted(Path(source_dir).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        contracts = parse_contracts(nb)
        for cell in nb.cells:
            gid = grade_id(cell) or ""
            if not (is_test_cell(cell) and gid.startswith("test_")):
                continue
            clauses = contracts.get(gid.removeprefix("test_"), {})
            total = round(sum(c.points for c in clauses.values()), 6)
            stated = float(nbgrader_meta(cell).get("points", 0))
            unpointed = [c.id for c in clauses.values() if c.points <= 0]
            if unpointed:
                problems.append(
                    f"{path.name} {gid}: clauses without points: {', '.join(unpointed)} (write 'K1 (1 poin).')"
                )
            elif total != stated:
                problems.append(
                    f"{path.name} {gid}: nbgrader points {stated:g}, but its clauses add up to {total:g}; "
                    "set the cell's points to the sum"
                )
    return problems


def _public_problems(release_dir: Path) -> list[str]:
    folder = Path(release_dir) / PUBLIC_DIR
    notebooks = sorted(Path(release_dir).glob("*.ipynb"))
    uses = any("from public_checks import" in c.source for p in notebooks for c in nbformat.read(p, 4).cells)
    if not uses:
        return []
    files = files_of(folder)
    problems = []
    stale = [name for name, data in engine_files().items() if files.get(name) != data]
    if stale:
        problems.append(
            f"{PUBLIC_DIR}/{', '.join(stale)}: not this version's pe_course.public_checks (run `pe-course release`)"
        )
    for path in notebooks:
        if f"{path.stem}.json" not in files and "from public_checks import" in path.read_text(
            encoding="utf-8"
        ):
            problems.append(
                f"{PUBLIC_DIR}/{path.stem}.json is missing: the test cells of {path.name} need it"
            )
    extra = (
        [p.name for p in folder.iterdir() if p.name not in files and p.name != "__pycache__"]
        if folder.is_dir()
        else []
    )
    if extra:
        problems.append(f"{PUBLIC_DIR}/ holds other files than the public checks: {', '.join(sorted(extra))}")
    return problems


def release_problems(release_dir: Path, source_dir: Path) -> list[str]:
    """Everything that makes a release unsafe or unusable for students (empty when fine)."""
    problems: list[str] = _data_problems(Path(release_dir), Path(source_dir))
    problems += points_problems(Path(source_dir)) + _public_problems(Path(release_dir))
    sources = {p.name: nbformat.read(p, as_version=4) for p in sorted(Path(source_dir).glob("*.ipynb"))}
    released = {p.name: nbformat.read(p, as_version=4) for p in sorted(Path(release_dir).glob("*.ipynb"))}
    if set(sources) != set(released):
        problems.append(
            f"release notebooks {sorted(released)} differ from source notebooks {sorted(sources)}"
        )
    for name, nb in sources.items():
        hidden = [grade_id(c) or str(i) for i, c in enumerate(nb.cells) if HIDDEN_MARKER in c.source]
        if hidden:  # graders/ decides the scores: a hidden region here would look like grading that is not
            problems.append(
                f"source {name}: '### BEGIN HIDDEN TESTS' in {', '.join(hidden)}; put hidden checks "
                "in graders/<assignment>/ instead"
            )
    for name, nb in released.items():
        solution_lines = _solution_lines(sources.get(name))
        for index, cell in enumerate(nb.cells):
            where = f"{name} cell {index} ({grade_id(cell) or cell.cell_type})"
            src = cell.source
            if (
                "BEGIN SOLUTION" in src
                or "END SOLUTION" in src
                or HIDDEN_MARKER in src
                or "END HIDDEN TESTS" in src
            ):
                problems.append(f"{where}: contains solution or hidden-test markers")
            if "MARK SCHEME" in src or RUBRIC_HEADING in src:
                problems.append(f"{where}: contains the graders' rubric (mark scheme)")
            if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count")):
                problems.append(f"{where}: has outputs")
            meta = nbgrader_meta(cell)
            if meta.get("solution") and cell.cell_type == "code" and "raise NotImplementedError(" not in src:
                problems.append(f"{where}: solution cell without a NotImplementedError stub")
            leaked = [line for line in src.splitlines() if line.strip() and line.strip() in solution_lines]
            if leaked:
                problems.append(f"{where}: solution text leaked: {leaked[0].strip()!r}")
            if is_test_cell(cell) and not meta.get("grade"):
                problems.append(f"{where}: test cell is not graded")
    return problems


def _solution_lines(nb: Any) -> set[str]:
    """Lines that appear only inside solution regions of the source notebook."""
    if nb is None:
        return set()
    inside: set[str] = set()
    elsewhere: set[str] = set()
    for cell in nb.cells:
        # nbgrader replaces a whole solution cell that has no markers (e.g. a written answer)
        active = bool(nbgrader_meta(cell).get("solution")) and SOLUTION_BEGIN not in cell.source
        for line in cell.source.splitlines():
            text = line.strip()
            if text == SOLUTION_BEGIN:
                active = True
            elif text == SOLUTION_END:
                active = False
            elif text and not text.startswith("#"):
                (inside if active else elsewhere).add(text)
    return inside - elsewhere - {"pass", "return out", "return result"}


def normalized(nb: Any) -> dict:
    """A notebook as data without volatile fields (cell ids), for golden comparisons."""
    data = nbformat.from_dict(nb) if not isinstance(nb, dict) else nb
    data = nbformat.from_dict(data)
    for cell in data.cells:
        for key in VOLATILE_CELL_KEYS:
            cell.pop(key, None)
    return data


def release_diff(course: Course) -> list[str]:
    """Names of committed release notebooks and data files that differ from a fresh generate_assignment."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate_release(course, Path(tmp))
        names = sorted(
            {p.name for p in fresh.glob("*.ipynb")} | {p.name for p in course.release.glob("*.ipynb")}
        )
        differ = []
        for name in names:
            a, b = fresh / name, course.release / name
            if not (a.exists() and b.exists()) or normalized(nbformat.read(a, 4)) != normalized(
                nbformat.read(b, 4)
            ):
                differ.append(name)
        fresh_data, committed = data_files(fresh), data_files(course.release)
        differ += [
            n for n in sorted(set(fresh_data) | set(committed)) if fresh_data.get(n) != committed.get(n)
        ]
    public = public_check_files(course)
    for where in (course.source, course.release):
        found = files_of(where / PUBLIC_DIR)
        differ += [
            f"{where.relative_to(course.root)}/{PUBLIC_DIR}/{n}"
            for n in sorted(set(public) | set(found))
            if not same_file(n, found.get(n), public.get(n))  # floats within one stored digit
        ]
    return differ


def public_check_files(course: Course) -> dict[str, bytes]:
    """The public checks as a fresh release would hold them (computed from graders/ and the reference)."""
    from ..course.notebooks import load_reference
    from ..engine.discovery import load_suite
    from .public_files import public_files

    notebooks = [p.stem for p in sorted(course.source.glob("*.ipynb"))]
    return public_files(load_suite(course.graders), load_reference(course.source), notebooks)


def refresh_release(course: Course) -> Path:
    """Check a fresh release in a scratch directory, then generate ``release/`` and the gradebook entry.

    The one command that refreshes the committed (golden) copy: ``pe-course release``. The public
    checks are written into ``source/<assignment>/public_checks/`` first, so that nbgrader copies
    them beside the notebooks (also for an instructor who runs plain ``nbgrader generate_assignment``).
    """
    from .public_files import write

    write(course.source / PUBLIC_DIR, public_check_files(course))
    with tempfile.TemporaryDirectory() as tmp:
        problems = release_problems(generate_release(course, Path(tmp)), course.source)
    if problems:
        raise ReleaseError("refusing to release:\n- " + "\n- ".join(problems))
    if course.release.exists():
        shutil.rmtree(course.release)
    return generate_release(course)

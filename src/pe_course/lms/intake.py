"""Taking submissions in the way an LMS hands them over, through ``nbgrader zip_collect``.

An LMS bulk download is a zip; :class:`LmsFileNameCollector` decides for the whole download at once
(:mod:`pe_course.lms.collect`) which file is which student's which notebook, so that
``nbgrader zip_collect <assignment>`` fills ``submitted/`` correctly, and says why every other
file is not taken in. It reads the names as Canvas and Moodle write them today
(:mod:`pe_course.lms.names`): Canvas ``<name key>[_LATE]_<user id>_<attachment id>_<file>`` (and the
older ``<login>_late_…``), Canvas's Test Student left out; Moodle 4.x folders
``<Full name>_<participant>_assignsubmission_file/``, 3.x ``…_assignsubmission_file_/`` and flat files.

Rosters (``c.LmsFileNameCollector.rosters``, :mod:`pe_course.lms.roster`): a Canvas gradebook export,
a Moodle grading worksheet, a Moodle participants export or any CSV with a name and an NPM column.
Submission times come from the LMS, never from the zip's build time: the worksheet's "Last modified
(submission)", Moodle 3.x's real entry times, read in ``c.LmsFileNameCollector.lms_timezone``; Canvas
states lateness only. The LMS identities go to ``.pe-course/lms-identities.json`` for the way back
(:mod:`pe_course.lms.identities`), so a later download maps to the same students.

Renamed files (``01_intro-1.ipynb``, ``01_intro (1).ipynb``, ``01_Intro.ipynb``) map to
the right notebook; when two files of one student stand for one notebook, the later upload is taken.

Archive entries that cannot be extracted safely (``..`` in the path, absolute paths — nbgrader's
extraction drops them without a word) and entries that are not notebooks are named in a warning by
:class:`ReportingExtractor` before extraction, so the instructor knows what was not taken in.

Configured in nbgrader_config.py::

    c.ZipCollectApp.collector_plugin = "pe_course.lms.intake.LmsFileNameCollector"
    c.ZipCollectApp.extractor_plugin = "pe_course.lms.intake.ReportingExtractor"
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path

from nbgrader.plugins.zipcollect import ExtractorPlugin, FileNameCollectorPlugin
from traitlets import List, TraitError, Unicode, validate

from ..course import Course
from . import collect as lms_collect
from . import identities as lms_ids
from .roster import RosterError, read_people

_COPY_SUFFIX = re.compile(r"(?:-\d+|\s*\(\d+\)|\s+copy)$", re.IGNORECASE)


def canonical_notebook(
    file_name: str, notebooks: list[str] | tuple[str, ...], others: tuple[str, ...] = ()
) -> str | None:
    """The assignment notebook a submitted file name stands for, or None.

    ``others``: the notebooks of the course's other assignments; a file named as one of them is that
    notebook, never one of ``notebooks`` that merely shares its number (another assignment's
    ``01_intro`` is not this one's ``01_basics``)."""
    stem, ext = os.path.splitext(os.path.basename(file_name))
    if ext.lower() != ".ipynb":
        return None
    stem = _COPY_SUFFIX.sub("", stem.strip()).strip().lower().replace(" ", "_")
    for name in notebooks:
        if stem == name.lower():
            return name
    if stem in {name.lower() for name in others}:
        return None
    by_number = [n for n in notebooks if stem.split("_")[0] == n.split("_")[0]]
    return by_number[0] if len(by_number) == 1 else None


TIMESTAMPS = ".pe-course-archive-entries.json"  # <extracted folder><this>, beside it: ReportingExtractor's


def entries_file(extracted: Path) -> Path:
    """Where ReportingExtractor keeps the archive entries' times (beside the extracted folder, so that
    nbgrader does not take it for a submitted file)."""
    return extracted.with_name(extracted.name + TIMESTAMPS)


class LmsFileNameCollector(FileNameCollectorPlugin):
    """FileNameCollector for Canvas and Moodle downloads: the whole download planned at once."""

    notebooks = List(
        Unicode(),
        help="Notebook names of the assignment (default: the notebooks of source/<assignment>/).",
    ).tag(config=True)
    roster = Unicode("", help="One roster CSV (kept for old configs; see rosters).").tag(config=True)
    rosters = List(
        Unicode(),
        help="Roster CSVs (Canvas gradebook export, Moodle grading worksheet or participants export, "
        "or any CSV with a name and NPM column), relative to the course directory.",
    ).tag(config=True)
    lms_timezone = Unicode(
        "UTC",
        help="The LMS server's time zone (IANA name, e.g. Asia/Jakarta): Moodle's times carry none.",
    ).tag(config=True)

    @validate("lms_timezone")
    def _valid_zone(self, proposal):
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(proposal["value"])
        except (ZoneInfoNotFoundError, ValueError):
            raise TraitError(
                f"LmsFileNameCollector.lms_timezone {proposal['value']!r} is not a time zone name "
                "(e.g. Asia/Jakarta, UTC)"
            ) from None
        return proposal["value"]

    def collect(self, submitted_file: str):
        root = _extracted_root(Path(submitted_file))
        if root is None:
            self.log.warning(
                "Skipping %s: not extracted by pe_course.lms.intake.ReportingExtractor", submitted_file
            )
            return None
        if getattr(self, "_plan_root", None) != root:
            self._plan_root, self._plan = root, self._make_plan(root)
        rel = Path(submitted_file).relative_to(root).as_posix()
        if rel not in self._plan.taken and rel not in self._plan.skipped:
            self.log.warning("Skipping %s: not inside an LMS download zip", submitted_file)
        if rel in self._plan.skipped:
            self.log.warning("Skipping %s: %s", submitted_file, self._plan.skipped[rel])
        return self._plan.taken.get(rel)

    def _course_root(self) -> Path:
        root = getattr(getattr(self.parent, "coursedir", None), "root", None) or os.getcwd()
        return Path(root)

    def _assignment(self) -> str:
        return getattr(getattr(self.parent, "coursedir", None), "assignment_id", "") or "assignment"

    def _notebooks(self) -> list[str]:
        if self.notebooks:
            return list(self.notebooks)
        return list(Course(self._course_root(), self._assignment()).notebooks)

    def _others(self) -> tuple[str, ...]:
        """The notebooks of the course's other assignments (a download may hold some: not taken in here)."""
        return Course(self._course_root(), self._assignment()).other_notebooks

    def _make_plan(self, root: Path) -> lms_collect.Plan:
        files = json.loads(entries_file(root).read_text(encoding="utf-8"))
        notebooks, others = self._notebooks(), self._others()
        if not notebooks:
            self._fail(f"No notebooks in source/{self._assignment()}/; nothing taken in")
        people = []
        names = [r for r in [self.roster, *self.rosters] if r]
        for name in names:
            path = Path(name) if Path(name).is_absolute() else self._course_root() / name
            try:
                kind, found = read_people(path)
            except (OSError, RosterError) as exc:
                self._fail(f"Roster {name} cannot be read: {exc}; nothing taken in")
            self.log.info("Roster %s: %s, %d students", name, kind, len(found))
            people += found
        try:
            known = lms_ids.load(self._course_root(), self._assignment())
        except ValueError as exc:
            self._fail(f"{exc}; nothing taken in")
        result = lms_collect.plan(
            files,
            lambda f: canonical_notebook(f, notebooks, others),
            notebooks,
            people,
            known,
            self.lms_timezone,
            roster_label=", ".join(names),
        )
        for line in result.lines:
            self.log.warning("Intake: %s", line)
        saved = lms_ids.save(self._course_root(), self._assignment(), result.identities)
        self.log.warning("Intake: LMS identities of %d students kept in %s", len(result.identities), saved)
        self._students_in_gradebook(result)
        return result

    def _fail(self, message: str):
        """Stop the whole intake with one line (nbgrader's own ``fail`` when run by its app)."""
        fail = getattr(self.parent, "fail", None)
        if callable(fail):
            fail(message)
        raise SystemExit(message)

    def _students_in_gradebook(self, result: lms_collect.Plan) -> None:
        """Each taken student in nbgrader's gradebook with the LMS user id (``Student.lms_user_id``)."""
        from nbgrader.api import Gradebook

        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            return
        taken = {info["student_id"] for info in result.taken.values()}
        with Gradebook(coursedir.db_url, course_id=coursedir.course_id or "default_course") as gb:
            for sid in sorted(taken):
                gb.update_or_create_student(sid, lms_user_id=result.identities[sid].lms_id)


def _extracted_root(path: Path) -> Path | None:
    for folder in path.parents:
        if entries_file(folder).is_file():
            return folder
    return None


def tidy_submissions(
    submitted: Path, assignment: str, notebooks: tuple[str, ...], others: tuple[str, ...] = ()
) -> list[str]:
    """Put misplaced or renamed notebooks where nbgrader looks for them; say what was done or not.

    ``submitted/<id>/01_intro.ipynb`` (no assignment folder) and
    ``submitted/<id>/<assignment>/01_intro (1).ipynb`` are moved to
    ``submitted/<id>/<assignment>/01_intro.ipynb`` when that is unambiguous (one candidate, and no
    notebook of that name already there); anything else is left alone and named, a notebook of another
    assignment (``others``) included. Nothing is deleted.
    """
    messages: list[str] = []
    if not submitted.is_dir():
        return messages
    for student_dir in sorted(p for p in submitted.iterdir() if p.is_dir()):
        target = student_dir / assignment
        loose = sorted(p for p in student_dir.glob("*.ipynb") if p.is_file())
        inside = sorted(p for p in target.glob("*.ipynb") if p.is_file()) if target.is_dir() else []
        stray = loose + [p for p in inside if p.stem not in notebooks]
        by_name: dict[str, list[Path]] = {}
        for path in stray:
            name = canonical_notebook(path.name, notebooks, others)
            if name is None:
                messages.append(
                    f"{path.relative_to(submitted)}: not one of the notebooks "
                    f"{', '.join(notebooks)}; left alone (not graded)"
                )
            else:
                by_name.setdefault(name, []).append(path)
        for name, paths in sorted(by_name.items()):
            dest = target / f"{name}.ipynb"
            shown = ", ".join(str(p.relative_to(submitted)) for p in paths)
            if dest.exists() or len(paths) > 1:
                why = (
                    "a notebook of that name is already there" if dest.exists() else "more than one candidate"
                )
                messages.append(f"{shown}: looks like {name}.ipynb, but {why}; left alone (not graded)")
                continue
            target.mkdir(exist_ok=True)
            paths[0].rename(dest)
            messages.append(f"{shown}: graded as {dest.relative_to(submitted)} (moved)")
    return messages


def skipped_entries(archive: Path) -> list[tuple[str, str]]:
    """(entry, why) for the entries of a zip archive that will not be taken in."""
    out = []
    try:
        names = zipfile.ZipFile(archive).namelist()
    except (OSError, zipfile.BadZipFile) as exc:
        return [(archive.name, f"not a readable zip archive ({exc})")]
    for name in names:
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
            out.append((name, "absolute path (not extracted)"))
        elif ".." in parts:
            out.append((name, "path leaves the archive with '..' (not extracted)"))
        elif not name.endswith("/") and not name.lower().endswith(".ipynb"):
            out.append((name, "not a notebook (ignored)"))
    return out


class ReportingExtractor(ExtractorPlugin):
    """nbgrader's extractor, naming every archive entry that will not be taken in, and keeping each
    entry's stored time and whether it was streamed (written with a data descriptor, as Moodle ≥ 4.0's
    ZipStream does: its times are then the download's) for the collector."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        entries: dict[str, dict] = {}
        for root, _, files in os.walk(archive_path):
            for name in files:
                path = Path(root) / name
                if path.suffix in self.zip_ext and zipfile.is_zipfile(path):
                    skipped = skipped_entries(path)
                    for entry, why in skipped[:200]:
                        self.log.warning("Skipping %s in %s: %s", entry, path.name, why)
                    if len(skipped) > 200:
                        self.log.warning(
                            "... and %d more skipped entries in %s", len(skipped) - 200, path.name
                        )
                    entries.update(archive_entries(path, Path(root).relative_to(archive_path)))
        super().extract(archive_path, extracted_path)
        entries_file(Path(extracted_path)).write_text(json.dumps(entries), encoding="utf-8")


def archive_entries(archive: Path, folder: Path = Path(".")) -> dict[str, dict]:
    """{path once extracted by nbgrader (into ``<folder>/<zip stem>/``): {"time", "streamed"}}."""
    import datetime

    with zipfile.ZipFile(archive) as zf:
        return {
            (folder / archive.stem / info.filename).as_posix(): {
                "time": datetime.datetime(*info.date_time).isoformat(),
                "streamed": bool(info.flag_bits & 0x08),
            }
            for info in zf.infolist()
            if not info.is_dir()
        }


def lms_zip(path: Path, files: dict[str, bytes], streamed: bool = False, when=None) -> Path:
    """Write an LMS-style bulk download zip ``{archive name: content}``. ``streamed``: as a streaming
    writer does (Canvas's rubyzip output stream, Moodle ≥ 4.0's ZipStream: data descriptors, every entry
    stamped ``when``, the build time); otherwise each entry has ``when`` (a dict per name, or one time)."""
    import io

    path.parent.mkdir(parents=True, exist_ok=True)

    class _Unseekable(io.RawIOBase):  # zipfile then writes data descriptors, as ZipStream does
        def __init__(self, fh):
            self.fh = fh

        def writable(self):
            return True

        def write(self, b):
            return self.fh.write(b)

    with open(path, "wb") as raw:
        target = _Unseekable(raw) if streamed else raw
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
            for arcname, content in sorted(files.items()):
                stamp = when.get(arcname) if isinstance(when, dict) else when
                info = zipfile.ZipInfo(arcname, date_time=(stamp or (2026, 12, 2, 8, 0, 0))[:6])
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, content)
    return path


def canvas_name(key: str, user_id: int, attachment_id: int, file_name: str, late: bool = False) -> str:
    """A Canvas download's entry name (``lib/content_zipper.rb``): name key, ``LATE``, ids, file."""
    return f"{key}{'_LATE' if late else ''}_{user_id}_{attachment_id}_{file_name}"

"""Taking submissions in the way an LMS hands them over, through ``nbgrader zip_collect``.

An LMS bulk download is a zip; :class:`LmsFileNameCollector` maps each file in it to the student and
to the assignment's notebook name so that ``nbgrader zip_collect positional-encoding`` fills
``submitted/`` correctly. It understands:

- **Canvas**: flat files ``<login>_[late_]<user id>_<submission id>_<file name>``;
- **Moodle** (SPADA and other Indonesian university Moodles): one folder per submission,
  ``<Full Name>_<participant id>_assignsubmission_file_/<file name>``, or the same as flat files
  ``<Full Name>_<participant id>_assignsubmission_file_<file name>``. Moodle names students by their
  full name; an optional roster CSV (``c.LmsFileNameCollector.roster = "roster.csv"``, columns such as
  ``Full name``/``Nama``, ``Identifier``/``Participant`` and ``ID number``/``NPM``/``student_id``)
  maps them to student ids; without one, the id is the name in lower case with dashes.

Renamed files (``01_embedding-1.ipynb``, ``01_embedding (1).ipynb``, ``01_Embedding.ipynb``) map to
the right notebook; files that match no notebook are skipped with a warning naming them. Each file's
time as stored in the archive is carried into nbgrader as the submission's timestamp, so nbgrader's
late-submission plugin can apply the course's policy; Canvas's ``late_`` flag is logged.

Archive entries that cannot be extracted safely (``..`` in the path, absolute paths — nbgrader's
extraction drops them without a word) and entries that are not notebooks are named in a warning by
:class:`ReportingExtractor` before extraction, so the instructor knows what was not taken in.

Configured in nbgrader_config.py::

    c.ZipCollectApp.collector_plugin = "pe_course.intake.LmsFileNameCollector"
    c.ZipCollectApp.extractor_plugin = "pe_course.intake.ReportingExtractor"
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from nbgrader.plugins.zipcollect import ExtractorPlugin, FileNameCollectorPlugin
from traitlets import List, Unicode

from .course import NOTEBOOKS

CANVAS_PATTERN = r".*[/\\](?P<student_id>[A-Za-z0-9.\-]+?)_(?:late_)?\d+_\d+_(?P<file_id>[^/\\]+)$"
_COPY_SUFFIX = re.compile(r"(?:-\d+|\s*\(\d+\)|\s+copy)$", re.IGNORECASE)


def canonical_notebook(file_name: str, notebooks: list[str] | tuple[str, ...] = NOTEBOOKS) -> str | None:
    """The assignment notebook a submitted file name stands for, or None."""
    stem, ext = os.path.splitext(os.path.basename(file_name))
    if ext.lower() != ".ipynb":
        return None
    stem = _COPY_SUFFIX.sub("", stem.strip()).strip().lower().replace(" ", "_")
    for name in notebooks:
        if stem == name.lower():
            return name
    by_number = [n for n in notebooks if stem.split("_")[0] == n.split("_")[0]]
    return by_number[0] if len(by_number) == 1 else None


MOODLE_FOLDER = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assignsubmission_[a-z]+_$")
MOODLE_FLAT = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assignsubmission_file_(?P<file>.+)$")
TIMESTAMPS = ".pe-course-archive-times.json"  # written next to the extracted files by ReportingExtractor


def slug(name: str) -> str:
    """A student id made from a full name: ``Ani Lestari`` -> ``ani-lestari``."""
    import unicodedata

    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "tanpa-nama"


def read_roster(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(participant id -> student id, normalised full name -> student id) from a roster CSV."""
    import csv

    by_participant: dict[str, str] = {}
    by_name: dict[str, str] = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh):
            cols = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
            sid = next(
                (
                    cols[k]
                    for k in ("student_id", "id number", "idnumber", "npm", "nim", "username")
                    if cols.get(k)
                ),
                "",
            )
            if not sid:
                continue
            name = next((cols[k] for k in ("full name", "fullname", "name", "nama") if cols.get(k)), "")
            if name:
                by_name[slug(name)] = sid
            participant = re.sub(
                r"\D", "", next((cols[k] for k in ("identifier", "participant") if cols.get(k)), "")
            )
            if participant:
                by_participant[participant] = sid
    return by_participant, by_name


class LmsFileNameCollector(FileNameCollectorPlugin):
    """FileNameCollector for Canvas and Moodle downloads: student from the names, notebook normalised."""

    named_regexp = Unicode(CANVAS_PATTERN, help="Regexp with student_id and file_id groups (Canvas).").tag(
        config=True
    )
    notebooks = List(list(NOTEBOOKS), help="Notebook names of the assignment.").tag(config=True)
    roster = Unicode(
        "",
        help="CSV mapping Moodle names (or participant ids) to student ids; "
        "relative to the course directory.",
    ).tag(config=True)

    def collect(self, submitted_file: str):
        info = self._canvas(submitted_file) or self._moodle(submitted_file)
        if not info:
            self.log.warning("Skipping %s: not a Canvas or Moodle submission file name", submitted_file)
            return None
        name = canonical_notebook(info["file_id"], self.notebooks)
        if name is None:
            self.log.warning(
                "Skipping %s: it is not one of the assignment's notebooks %s",
                submitted_file,
                ", ".join(self.notebooks),
            )
            return None
        info["file_id"] = f"{name}.ipynb"
        stamp = _archive_time(Path(submitted_file))
        if stamp:
            info["timestamp"] = stamp
        return info

    def _canvas(self, submitted_file: str) -> dict | None:
        match = re.match(self.named_regexp, submitted_file)
        if not match:
            return None
        if "_late_" in os.path.basename(submitted_file):
            self.log.warning("%s: the LMS marked this submission late", os.path.basename(submitted_file))
        return {"student_id": match.group("student_id").lower(), "file_id": match.group("file_id")}

    def _moodle(self, submitted_file: str) -> dict | None:
        path = Path(submitted_file)
        folder, flat = MOODLE_FOLDER.match(path.parent.name), MOODLE_FLAT.match(path.name)
        if folder:
            name, participant, file_id = folder.group("name"), folder.group("participant"), path.name
        elif flat:
            name, participant, file_id = flat.group("name"), flat.group("participant"), flat.group("file")
        else:
            return None
        return {"student_id": self._student_id(name, participant), "file_id": file_id}

    def _student_id(self, name: str, participant: str) -> str:
        if not self.roster:
            return slug(name)
        by_participant, by_name = self._roster()
        sid = by_participant.get(participant) or by_name.get(slug(name))
        if sid is None:
            self.log.warning(
                "%s (participant %s) is not on the roster %s: taken in as %s",
                name,
                participant,
                self.roster,
                slug(name),
            )
            return slug(name)
        return sid

    def _roster(self) -> tuple[dict[str, str], dict[str, str]]:
        if not hasattr(self, "_roster_cache"):
            path = Path(self.roster)
            if not path.is_absolute():
                root = getattr(getattr(self.parent, "coursedir", None), "root", None) or os.getcwd()
                path = Path(root) / path
            self._roster_cache = read_roster(path)
        return self._roster_cache


def _archive_time(path: Path) -> str:
    """The time the archive stored for this extracted file (ISO, UTC as written), or ""."""
    import json

    for folder in path.parents:
        sidecar = folder / TIMESTAMPS
        if sidecar.is_file():
            try:
                times = json.loads(sidecar.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return ""
            return str(times.get(str(path.relative_to(folder)), ""))
    return ""


def tidy_submissions(submitted: Path, assignment: str, notebooks: tuple[str, ...] = NOTEBOOKS) -> list[str]:
    """Put misplaced or renamed notebooks where nbgrader looks for them; say what was done or not.

    ``submitted/<id>/01_embedding.ipynb`` (no assignment folder) and
    ``submitted/<id>/<assignment>/01_embedding (1).ipynb`` are moved to
    ``submitted/<id>/<assignment>/01_embedding.ipynb`` when that is unambiguous (one candidate, and no
    notebook of that name already there); anything else is left alone and named. Nothing is deleted.
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
            name = canonical_notebook(path.name, notebooks)
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
    entry's stored time for the collector (the submission timestamps)."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        import datetime
        import json

        times: dict[str, str] = {}
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
                    rel = (
                        Path(root).relative_to(archive_path) / path.stem
                    )  # nbgrader extracts into <zip stem>/
                    with zipfile.ZipFile(path) as zf:
                        for info in zf.infolist():
                            if not info.is_dir():
                                stamp = datetime.datetime(*info.date_time).isoformat()
                                times[str(rel / info.filename)] = stamp
        super().extract(archive_path, extracted_path)
        Path(extracted_path, TIMESTAMPS).write_text(json.dumps(times), encoding="utf-8")


def lms_zip(path: Path, files: dict[str, bytes]) -> Path:
    """Write an LMS-style bulk download zip of flat files ``{archive name: content}``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, content in sorted(files.items()):
            zf.writestr(arcname, content)
    return path


def canvas_name(login: str, user_id: int, submission_id: int, file_name: str, late: bool = False) -> str:
    return f"{login}_{'late_' if late else ''}{user_id}_{submission_id}_{file_name}"

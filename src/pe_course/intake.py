"""Taking submissions in the way an LMS hands them over, through ``nbgrader zip_collect``.

An LMS bulk download (Canvas style) is a zip of flat files named
``<login>_[late_]<user id>_<submission id>_<file name>``, where the LMS renames re-uploads
(``01_embedding-1.ipynb``) and students rename files (``01_embedding (1).ipynb``, ``01_Embedding.ipynb``).
:class:`LmsFileNameCollector` maps each file to the student and to the assignment's notebook name so
that ``nbgrader zip_collect positional-encoding`` fills ``submitted/`` correctly; files that match no
notebook are skipped with a warning naming them.

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


class LmsFileNameCollector(FileNameCollectorPlugin):
    """FileNameCollector for LMS downloads: student from the file name, notebook name normalised."""

    named_regexp = Unicode(CANVAS_PATTERN, help="Regexp with student_id and file_id groups.").tag(config=True)
    notebooks = List(list(NOTEBOOKS), help="Notebook names of the assignment.").tag(config=True)

    def collect(self, submitted_file: str):
        info = super().collect(submitted_file)
        if not info:
            return None
        name = canonical_notebook(info["file_id"], self.notebooks)
        if name is None:
            self.log.warning("Skipping %s: it is not one of the assignment's notebooks %s",
                             submitted_file, ", ".join(self.notebooks))
            return None
        info["student_id"] = info["student_id"].lower()
        info["file_id"] = f"{name}.ipynb"
        return info


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
                messages.append(f"{path.relative_to(submitted)}: not one of the notebooks "
                                f"{', '.join(notebooks)}; left alone (not graded)")
            else:
                by_name.setdefault(name, []).append(path)
        for name, paths in sorted(by_name.items()):
            dest = target / f"{name}.ipynb"
            shown = ", ".join(str(p.relative_to(submitted)) for p in paths)
            if dest.exists() or len(paths) > 1:
                why = "a notebook of that name is already there" if dest.exists() else "more than one candidate"
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
    """nbgrader's extractor, naming every archive entry that will not be taken in."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        for root, _, files in os.walk(archive_path):
            for name in files:
                path = Path(root) / name
                if path.suffix in self.zip_ext and zipfile.is_zipfile(path):
                    skipped = skipped_entries(path)
                    for entry, why in skipped[:200]:
                        self.log.warning("Skipping %s in %s: %s", entry, path.name, why)
                    if len(skipped) > 200:
                        self.log.warning("... and %d more skipped entries in %s", len(skipped) - 200, path.name)
        super().extract(archive_path, extracted_path)


def lms_zip(path: Path, files: dict[str, bytes]) -> Path:
    """Write an LMS-style bulk download zip of flat files ``{archive name: content}``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, content in sorted(files.items()):
            zf.writestr(arcname, content)
    return path


def canvas_name(login: str, user_id: int, submission_id: int, file_name: str, late: bool = False) -> str:
    return f"{login}_{'late_' if late else ''}{user_id}_{submission_id}_{file_name}"

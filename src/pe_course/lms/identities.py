"""The LMS identities of each student, kept beside the gradebook so a later download maps to the same
students and grades and feedback can go back: ``.pe-course/lms-identities.json``.

One record per (assignment, student id): the LMS, its user id (Canvas) or participant id (Moodle),
the name as the LMS wrote it, each notebook's Canvas attachment id, the Moodle folder layout, and
the submission's time and lateness with where each came from.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

FILE = "lms-identities.json"


@dataclass
class Identity:
    student_id: str
    lms: str
    lms_id: str  # Canvas user id / Moodle participant id
    name: str  # Canvas name key or Moodle full name, as in the download
    roster_name: str = ""  # the name in the roster (Canvas sortable name, Moodle full name)
    late: bool | None = None  # the LMS's word on lateness (None: it said nothing)
    time: str = ""  # submission time given to nbgrader (ISO, with offset), "" when none
    time_source: str = ""  # where time/lateness came from, in words
    layout: str = ""  # Moodle folder4/folder3/flat
    attachments: dict[str, str] = field(default_factory=dict)  # notebook -> Canvas attachment id


def path_for(root: Path) -> Path:
    return Path(root) / ".pe-course" / FILE


def load(root: Path, assignment: str) -> dict[str, Identity]:
    path = path_for(root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable ({exc}); move it aside to start afresh") from None
    return {sid: Identity(**rec) for sid, rec in data.get(assignment, {}).items()}


def save(root: Path, assignment: str, identities: dict[str, Identity]) -> Path:
    """Merge this assignment's records into the file (other assignments' records kept)."""
    path = path_for(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data[assignment] = {sid: asdict(rec) for sid, rec in sorted(identities.items())}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


def previous_id(identities: dict[str, Identity], lms: str, lms_id: str) -> str | None:
    """The student id an earlier intake gave this LMS user, if any."""
    for sid, rec in identities.items():
        if rec.lms == lms and rec.lms_id == lms_id:
            return sid
    return None

"""Deciding, for a whole extracted download at once, which file is which student's which notebook,
with what submission time, and saying why every other file is not taken in.

Times: never the zip's own entry times where the LMS stamps them with the download time (Canvas's
rubyzip, Moodle ≥ 4.0's ZipStream); Moodle 3.x keeps each file's upload time, in the server's local
time without a zone, read here in the configured LMS time zone. A Moodle grading worksheet given as
a roster states each submission's time and lateness and wins over the archive. Canvas downloads
state only lateness (``_LATE``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from dateutil import parser as dateparser

from . import identities as ids
from .names import Entry, parse, same_name, slug
from .roster import Person

LATE_WORDS = re.compile(r"\blate\b|terlambat", re.I)
# Moodle in Bahasa Indonesia writes its dates with Indonesian day and month names.
INDONESIAN = {
    "senin": "Monday",
    "selasa": "Tuesday",
    "rabu": "Wednesday",
    "kamis": "Thursday",
    "jumat": "Friday",
    "sabtu": "Saturday",
    "minggu": "Sunday",
    "januari": "January",
    "februari": "February",
    "maret": "March",
    "mei": "May",
    "juni": "June",
    "juli": "July",
    "agustus": "August",
    "oktober": "October",
    "desember": "December",
}


@dataclass
class Plan:
    taken: dict[str, dict] = field(default_factory=dict)  # extracted path -> nbgrader collect info
    skipped: dict[str, str] = field(default_factory=dict)  # extracted path -> why
    identities: dict[str, ids.Identity] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # what the instructor is told, one line each


@dataclass
class Candidate:
    path: str
    entry: Entry
    notebook: str
    student_id: str = ""
    archive_time: str = ""
    streamed: bool = False


def plan(
    files: dict[str, dict],
    notebook_of: Callable[[str], str | None],
    notebooks: list[str],
    people: list[Person],
    known: dict[str, ids.Identity],
    timezone: str,
    roster_label: str = "",
) -> Plan:
    """``files``: extracted path (relative to the extracted folder) -> {"time", "streamed"} from the
    archive. ``notebook_of`` maps a submitted file name to a notebook name (or None)."""
    zone = ZoneInfo(timezone)
    out = Plan(identities=dict(known))
    cands: list[Candidate] = []
    for path in sorted(files):
        entry = parse(path)
        if entry is None and "_assignsubmission_" in path:
            out.skipped[path] = "a Moodle submission of another kind (e.g. online text), not a notebook"
            continue
        if entry is None:
            out.skipped[path] = "not a Canvas or Moodle submission file name"
            continue
        if entry.test_student:
            out.skipped[path] = "Canvas's Test Student (Student View), not a student: left out"
            continue
        nb = notebook_of(entry.file)
        if nb is None:
            out.skipped[path] = f"it is not one of the assignment's notebooks {', '.join(notebooks)}"
            continue
        meta = files[path]
        cands.append(
            Candidate(path, entry, nb, archive_time=meta.get("time", ""), streamed=meta.get("streamed", True))
        )
    streamed_archive = any(c.streamed for c in cands)
    taken_ids: dict[str, str] = {}  # student id -> "lms:lms_id" (two LMS users never share an id)
    for cand in cands:
        cand.student_id = _student_id(cand.entry, people, out, taken_ids, roster_label)
    best: dict[tuple[str, str], Candidate] = {}
    for cand in cands:
        key = (cand.student_id, cand.notebook)
        other = best.get(key)
        if other is None:
            best[key] = cand
            continue
        keep, drop = sorted((other, cand), key=_newer, reverse=True)
        best[key] = keep
        out.skipped[drop.path] = (
            f"another file of this student stands for {cand.notebook}.ipynb: {Path(keep.path).name} "
            f"taken ({_why_kept(keep, drop)})"
        )
    by_student: dict[str, list[Candidate]] = {}
    for cand in best.values():
        by_student.setdefault(cand.student_id, []).append(cand)
    for sid, mine in sorted(by_student.items()):
        first = mine[0].entry
        person = _person(first, people)
        rec = ids.Identity(
            student_id=sid,
            lms=first.lms,
            lms_id=first.lms_id,
            name=first.name,
            roster_name=person.name if person else "",
            layout=first.layout,
            attachments={c.notebook: c.entry.attachment for c in mine if c.entry.attachment},
        )
        _lateness(rec, mine, person, zone, timezone, streamed_archive)
        out.identities[sid] = rec
        for cand in mine:
            info = {"student_id": sid, "file_id": f"{cand.notebook}.ipynb"}
            if rec.time:
                info["timestamp"] = rec.time
            out.taken[cand.path] = info
        shown = rec.time or "no time"
        late = {True: "late", False: "on time", None: "lateness unknown"}[rec.late]
        renamed = [
            f"{Path(c.entry.file).name} as {c.notebook}.ipynb"
            for c in mine
            if Path(c.entry.file).stem != c.notebook
        ]
        who = f"{sid} ({rec.roster_name or rec.name})"
        more = f" ({', '.join(renamed)})" if renamed else ""
        out.lines.append(f"{who}: {len(mine)} notebook(s){more}, {late}, {shown} — from {rec.time_source}")
    submitted = {(i.lms, i.lms_id) for i in out.identities.values() if i.student_id in by_student}
    for person in people:
        if person.test_student:
            continue
        if person.participant and ("moodle", person.participant) in submitted:
            continue
        if person.lms_user_id and ("canvas", person.lms_user_id) in submitted:
            continue
        if person.student_id in by_student:
            continue
        out.lines.append(
            f"{person.student_id} ({person.name}): on the roster, nothing submitted in this download"
        )
    return out


def _newer(cand: Candidate) -> tuple:
    exact = Path(cand.entry.file).stem == cand.notebook
    return (int(cand.entry.attachment or 0), cand.archive_time, exact)


def _why_kept(keep: Candidate, drop: Candidate) -> str:
    if keep.entry.attachment != drop.entry.attachment:
        return "the later upload: the higher Canvas attachment id"
    if keep.archive_time != drop.archive_time and not keep.streamed:
        return "the later upload time in the archive"
    if _newer(keep)[2] != _newer(drop)[2]:
        return "its name is exactly the notebook's"
    return "the first in the archive"


def _person(entry: Entry, people: list[Person]) -> Person | None:
    for person in people:
        if entry.lms == "moodle" and person.participant and person.participant == entry.lms_id:
            return person
        if entry.lms == "canvas" and person.lms_user_id and person.lms_user_id == entry.lms_id:
            return person
    for person in people:
        if entry.lms == "canvas" and not person.participant and person.canvas_key == entry.name:
            return person
        if entry.lms == "moodle" and not person.lms_user_id and same_name(person.name, entry.name):
            return person
    return None


def _student_id(entry: Entry, people: list[Person], out: Plan, taken: dict[str, str], roster: str) -> str:
    me = f"{entry.lms}:{entry.lms_id}"
    for sid, owner in taken.items():
        if owner == me:
            return sid
    person = _person(entry, people)
    found = person.student_id if person else ids.previous_id(out.identities, entry.lms, entry.lms_id)
    if found is not None:
        sid = found
    else:
        sid = slug(entry.name) if entry.name else entry.lms_id.lower()
        if sid in taken or (sid in out.identities and out.identities[sid].lms_id != entry.lms_id):
            sid = f"{sid}-{entry.lms_id}"
        if roster:
            who = "participant" if entry.lms == "moodle" else "Canvas user"
            out.lines.append(
                f"{entry.name} ({who} {entry.lms_id}) is not on the roster {roster}: taken in as {sid}"
            )
    taken[sid] = me
    return sid


def _lateness(
    rec: ids.Identity,
    mine: list[Candidate],
    person: Person | None,
    zone: ZoneInfo,
    tzname: str,
    streamed: bool,
) -> None:
    if person is not None and person.status:
        rec.late = bool(LATE_WORDS.search(person.status))
        when = _worksheet_time(person.submitted, zone)
        rec.time = when
        rec.time_source = f"Moodle grading worksheet (status {person.status!r}" + (
            f", last modified {person.submitted!r} read in {tzname})" if when else ", no time given)"
        )
        return
    if rec.lms == "canvas":
        rec.late = any(bool(c.entry.late) for c in mine)
        rec.time_source = "Canvas's _LATE flag (a Canvas download states no time: no nbgrader late penalty)"
        return
    real = rec.layout == "folder3" or (rec.layout == "flat" and not streamed)
    stamps = sorted(c.archive_time for c in mine if c.archive_time)
    if real and stamps:
        local = dt.datetime.fromisoformat(stamps[-1]).replace(tzinfo=zone)
        rec.time = local.isoformat()
        rec.time_source = f"the archive's entry times (Moodle 3.x keeps each upload's time), read in {tzname}"
        return
    rec.time_source = (
        "nothing: Moodle ≥ 4.0 stamps its zip with the download time, not used; give the grading "
        "worksheet as roster for submission times"
    )


def _worksheet_time(text: str, zone: ZoneInfo) -> str:
    text = text.strip()
    if not text or text == "-":
        return ""
    text = re.sub(r"[A-Za-z]+", lambda m: INDONESIAN.get(m.group(0).lower(), m.group(0)), text)
    try:
        when = dateparser.parse(text)
    except (ValueError, OverflowError):
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.isoformat()

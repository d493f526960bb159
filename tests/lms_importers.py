"""Faithful models of what Canvas and Moodle do with the files ``pe-course export`` writes, rule by
rule, each rule with the importer file (and line or method) it comes from. Read on 2026-12-04:

- Canvas ``app/models/gradebook_importer.rb`` (Grades → Import) and, for Re-Upload Submissions,
  ``app/models/abstract_assignment.rb`` @028f76bb ``infer_comment_context_from_filename`` and
  ``generate_comments_from_files`` (read in ``app/models/assignment.rb`` before it moved; issue 31
  observed the same one-comment-per-student on current Canvas);
- Moodle ``mod/assign/feedback/offline/importgradeslib.php`` @452e36fc (the worksheet reader),
  ``mod/assign/feedback/offline/locallib.php`` @04975560 ``process_import_grades`` (what it writes) and
  ``mod/assign/feedback/file/importziplib.php`` @0203d8f2 (feedback files in a zip).

Line numbers are given for importgradeslib.php (read whole at that commit) and as issue 31 cites
them for gradebook_importer.rb; elsewhere the method and the quoted code (the canvas-lms and Moodle
snapshots are too large to fetch here, so their line numbers could not be counted).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# ---------------------------------------------------------------------------------------- Canvas


@dataclass
class CanvasCourse:
    assignments: dict[str, str]  # assignment id -> title
    students: dict[str, dict]  # user id -> {"name", "sortable", "sis", "login"}
    grades: dict[tuple[str, str], str] = field(default_factory=dict)  # (user, assignment) -> "30", "EX"
    attachments: dict[str, dict[str, str]] = field(default_factory=dict)  # user -> {attachment: display}


@dataclass
class CanvasImport:
    changes: dict[tuple[str, str], str]  # (user, assignment) -> new value ("" = posts null: cleared)
    new_assignments: list[str] = field(default_factory=list)
    unknown_students: list[str] = field(default_factory=list)
    failed: str = ""


NON_ASSIGNMENT = re.compile(  # gradebook_importer.rb NON_ASSIGNMENT_COLUMN_HEADERS (+ "Unposted …")
    "Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|Override Score|"
    "Override Grade|Override Status"
)


def _delimiter(lines: list[str]) -> str:
    # gradebook_importer.rb identify_delimiter / semicolon_delimited?: the first 3 lines, ";" when it
    # gives a consistent field count larger than ","'s
    counts = {}
    for sep in (";", ","):
        sizes = {len(next(csv.reader([line], delimiter=sep), [])) for line in lines}
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def canvas_import_rows(path: Path) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """The rows Canvas's GradebookImporter sees: separator from the first three lines, the header,
    the points-possible row and the student rows (``csv_stream``, ``check_for_non_student_row``)."""
    text = path.read_bytes().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text.splitlines()[:3])))
    header, rest = rows[0], rows[1:]
    assert (
        header[0] == "Student" and header[1] == "ID" and "Section" in header
    )  # header? / update_column_count
    points = [r for r in rest if "Points Possible" in r[0]]
    return header, points, [r for r in rest if r not in points]


def _decimal(field_: str) -> str:
    # gradebook_importer.rb CSV::Converters[:decimal_comma_to_period]
    if re.fullmatch(r"-?[0-9.,]+%?", field_):
        parts = re.split(r"[,.]", field_)
        last = parts.pop()
        return last if not parts else "".join(parts) + "." + last
    return field_


def _no_change(new: str, current: str) -> bool:
    # gradebook_importer.rb no_change_to_value? (lines 858–861 as issue 31 cites them): a blank equals only a blank
    # or "-"; one blank and one score is a change (the upload then posts null:
    # process_gradebook_upload.js); scores compared at two decimals
    def no_score(v: str) -> bool:
        return v.strip() in ("", "-")

    if new == current or (no_score(new) and no_score(current)):
        return True
    if no_score(new) or no_score(current):
        return False
    if "EX" in (new.upper(), current.upper()):
        return False
    return f"{float(new):.2f}" == f"{float(current):.2f}"


def canvas_import(path: Path, course: CanvasCourse) -> CanvasImport:
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # a BOM stays on "Student": row_has_student_headers? uses include?
    lines = [line for line in text.splitlines() if line.strip()][:3]
    sep = _delimiter(lines)
    rows = [
        [_decimal(c) for c in r]
        for r in csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        if not re.fullmatch(r"[;, ]*", sep.join(r))  # csv_stream skip_lines: /^[;, ]+$/
    ]
    header = rows[0]
    # header? / row_has_student_headers?: more than 3 columns, "Student" then "ID" (or LastName, …)
    first_last = len(header) > 4 and header[0] == "LastName" and header[1] == "FirstName"
    if not ((len(header) > 3 and "Student" in header[0] and "ID" in header[1]) or first_last):
        return CanvasImport({}, failed="Invalid header row")
    # update_column_count: name (and id) columns, then SIS User ID + SIS Login ID (+ Integration ID,
    # + Root Account), or SIS Login ID alone; the last of them must be "Section"
    n = 4 if first_last else 3
    cols, sis_user, sis_login = n, None, None
    if re.search(r"SIS\s+Login\s+ID", header[n - 1]):
        sis_login, cols = n - 1, cols + 1
    elif re.search(r"SIS\s+User\s+ID", header[n - 1]) and re.search(r"SIS\s+Login\s+ID", header[n]):
        extra = 1 if re.search(r"Integration\s+ID", header[n + 1]) else 0
        sis_user, sis_login, cols = n - 1, n, cols + 2 + extra
        if re.search(r"Root\s+Account", header[n + 1 + extra]):
            cols += 1
    if "Section" not in header[cols - 1]:  # last_student_info_column(row).include?("Section")
        return CanvasImport({}, failed="Invalid header row")
    result = CanvasImport({})
    titled = {}
    for i, h in enumerate(header[cols:], start=cols):  # strip_non_assignment_columns
        if NON_ASSIGNMENT.search(h):
            continue
        match = re.fullmatch(r"(.*)\s\((\d+)\)", h)  # parse_assignments: Assignment.title_and_id
        if match and match.group(2) in course.assignments:
            titled[i] = match.group(2)
        elif h in course.assignments.values():  # "backward compat": the whole header as a title
            titled[i] = next(k for k, v in course.assignments.items() if v == h)
        else:
            result.new_assignments.append(h)  # Assignment.new: the import would create it
    points: list[str] = []
    for row in rows[1:]:
        if "Points Possible" in row[0]:  # check_for_non_student_row → process_pp
            points = row
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, flags=re.I) for c in row):
            continue
        # process_student: the Canvas ID (row[1], or row[2] with first/last names), then SIS ids, then name
        user = row[2 if first_last else 1]
        if user not in course.students:
            people = course.students.items()
            by = [
                (sis_user, "sis"),
                (sis_login, "login"),
            ]
            user = next(
                (
                    u
                    for col, key in by
                    if col is not None
                    for u, s in people
                    if row[col] and s[key] == row[col]
                ),
                "",
            )
            name = f"{row[1]} {row[0]}".strip() if first_last else row[0]
            user = user or next((u for u, s in people if name in (s["name"], s["sortable"])), "")
        if not user:
            result.unknown_students.append(row[0])
            continue
        for i, assignment in titled.items():
            if points and re.search(r"read\s+only", points[i]):  # readonly_assignment?
                continue
            new = row[i].strip()  # process_submissions: row[assignment_index]&.strip
            current = course.grades.get((user, assignment), "")
            if not _no_change(new, current):
                result.changes[(user, assignment)] = new
    return result


@dataclass
class CanvasComment:
    text: str
    files: list[tuple[str, str]]  # (display name the student sees, extension of the uploaded file)


def canvas_reupload(path: Path, course: CanvasCourse) -> tuple[dict[str, CanvasComment], list[str]]:
    """abstract_assignment.rb: generate_comments_from_files and infer_comment_context_from_filename."""
    by_user: dict[str, list[tuple[str, str]]] = {}
    ignored = []
    for entry in zipfile.ZipFile(path).namelist():
        name = PurePosixPath(entry).name  # File.basename(fullpath)
        parts = [p for p in name.split("_") if p != "LATE"]  # filename.split("_") - ["LATE"]
        user, attachment = ([p for p in parts if re.fullmatch(r"\d+", p)] + ["", ""])[:2]  # grep.take(2)
        if parts[-1].startswith("link") or name.startswith("._"):
            attachment = ""
        current = course.attachments.get(user, {})  # submission.attachments.where(id:).exists?
        if not attachment or attachment not in current:
            ignored.append(entry)
            continue
        # display_name: attachment.display_name; the content type comes from the file's own name
        by_user.setdefault(user, []).append((current[attachment], PurePosixPath(name).suffix))
    comments = {  # files_for_user = file_map.group_by { |f| f[:user] }: one comment per user
        u: CanvasComment("See attached files" if len(f) > 1 else "See attached file", f)
        for u, f in by_user.items()
    }
    return comments, ignored


# ---------------------------------------------------------------------------------------- Moodle

STRINGS = {  # lang/en and the Indonesian pack: core grade, assign recordid, lastmodifiedgrade, hiddenuser
    "en": {"grade": "Grade", "recordid": "Identifier", "modified": "Last modified (grade)", "hiddenuser": "Participant ",
           "comments": "Feedback comments", "decsep": "."},
    "id": {"grade": "Nilai", "recordid": "ID", "modified": "Terakhir diubah (nilai)", "hiddenuser": "Peserta",
           "comments": "Komentar umpan balik", "decsep": ","},
}  # fmt: skip


@dataclass
class MoodleAssignment:
    participants: dict[str, str]  # participant id (assign_user_mapping) -> user
    maxgrade: float
    grades: dict[str, float] = field(default_factory=dict)  # user -> grade (a grade record exists)
    graded_at: dict[str, int] = field(default_factory=dict)  # user -> the grade record's timemodified
    comments: dict[str, str] = field(default_factory=dict)
    feedback_files: dict[str, list[str]] = field(default_factory=dict)
    locked: set[str] = field(default_factory=set)  # grading_disabled(): locked/overridden in the gradebook
    lang: str = "en"  # the uploading user's language


def _strtotime(text: str) -> int:
    # PHP strtotime reads Moodle's English strftimedatetime; "-" and other languages give false (0)
    try:
        return int(dt.datetime.strptime(text.strip(), "%A, %d %B %Y, %I:%M %p").timestamp())
    except ValueError:
        return 0


def _unformat_float(text: str, decsep: str) -> float | None:
    # lib/moodlelib.php unformat_float: spaces out, the language's decimal separator to "."
    value = text.replace(" ", "").replace(decsep, ".")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def moodle_worksheet_import(
    path: Path, assign: MoodleAssignment, now: int, ignoremodified: bool = False
) -> tuple[dict[str, float], dict[str, str], str]:
    """(grades written, comments written, failure) as Upload grading worksheet would."""
    s = STRINGS[assign.lang]
    text = path.read_bytes().decode("utf-8")
    text = text.removeprefix("\ufeff")  # csv_import_reader::load_csv_content trims the BOM
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=","))  # 'comma' (importgradeslib.php:80)
    header = rows[0]
    # importgradeslib.php:96–125 init(): columns by exact name in the uploader's language
    idx = {
        k: header.index(s[k]) if s[k] in header else -1 for k in ("grade", "recordid", "modified", "comments")
    }
    if min(idx["grade"], idx["recordid"], idx["modified"]) < 0:  # importgradeslib.php:127
        return {}, {}, "invalidgradeimport"
    grades: dict[str, float] = {}
    comments: dict[str, str] = {}
    for record in rows[1:]:
        if not any(c.strip() for c in record):
            continue
        # importgradeslib.php:157 next(): substr(idstr, strlen(get_string('hiddenuser', 'assign')))
        pid = record[idx["recordid"]][len(s["hiddenuser"]) :].strip()
        user = assign.participants.get(pid)
        if user is None:  # get_user_id_for_uniqueid / validusers (importgradeslib.php:158–159)
            continue
        grade = _unformat_float(record[idx["grade"]], s["decsep"])
        modified = _strtotime(record[idx["modified"]])  # importgradeslib.php:161
        # locallib.php process_import_grades: "Do not count the seconds when comparing modified dates"
        stale = user in assign.graded_at and assign.graded_at[user] > modified + 60
        if user in assign.grades and assign.grades[user] == grade:
            skip = True  # Skip - grade not modified
        elif grade is None or grade < 0:
            skip = True  # Skip - grade has no value
        elif not ignoremodified and stale:
            skip = True  # Skip - grade has been modified
        elif user in assign.locked:
            skip = True  # Skip grade is locked ($this->assignment->grading_disabled)
        else:
            skip = grade > assign.maxgrade  # Out of range
        if not skip:
            assign.grades[user] = grades[user] = float(grade)  # type: ignore[arg-type]
            assign.graded_at[user] = now  # update_grade + notify_grade_modified
        # the feedback columns: written when not stale, whatever happened to the grade (locked too);
        # importgradeslib.php:165 keeps a column only when !empty($details['index'])
        if (ignoremodified or not stale) and idx["comments"] > 0:
            new = record[idx["comments"]]
            if new != assign.comments.get(user, ""):  # if ($newvalue != $oldvalue)
                assign.comments[user] = comments[user] = new
                assign.graded_at[user] = now
    return grades, comments, ""


PLUGINS = {("assignsubmission", "file"), ("assignsubmission", "onlinetext"), ("assignfeedback", "file")}


def moodle_zip_import(path: Path, assign: MoodleAssignment, now: int) -> dict[str, list[str]]:
    """importziplib.php: is_valid_filename_for_import and import_zip_files."""
    added: dict[str, list[str]] = {}
    for info in zipfile.ZipFile(path).infolist():
        if info.is_dir():
            continue
        name = PurePosixPath(info.filename).name
        if name.startswith(".") or name.startswith("~"):  # hidden files ignored
            continue
        parts = info.filename.split("/")
        while parts:
            part = parts.pop(0)
            bits = part.split("_", 4)  # explode('_', $pathpart, 5)
            if len(bits) < 4 or not bits[1].isdigit():  # count($info) < 4; is_numeric($participantid)
                continue
            user = assign.participants.get(str(int(bits[1])))
            if user is None or (bits[2], bits[3]) not in PLUGINS:  # $participants[…]; get_plugin_by_type
                continue
            filename = "/".join([bits[4] if len(bits) > 4 else "", *parts]).lstrip("/")
            added.setdefault(user, []).append(filename)
            assign.feedback_files.setdefault(user, []).append(filename)
            assign.graded_at[user] = now  # get_user_grade(…, true) + notify_grade_modified
            break
    return added

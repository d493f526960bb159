"""nbgrader's exchange on a shared server: collect only what each student submitted themselves.

nbgrader's default exchange (``nbgrader.exchange.default``) keeps every submission in one
``inbound`` directory that every user may write to (mode 2733: no listing) under the name
``<student>+<assignment>+<timestamp>+<random>``, and ``nbgrader collect`` takes each student's latest
one *by that name*. Its owner check (``CollectApp.check_owner``) only logs a warning, so any student
can put a folder named ``<someone else>+<assignment>+<a later time>+x`` there and it is collected as
that other student's submission (tried in tests/e2e/test_shared_server.py): one student replaces
another's work. And each submission's folder is left writable by all (mode 777), so a student who
learnt another's folder name could replace a file in it (a new file, theirs). :class:`OwnerCheckedCollect`
leaves such folders where they are — one not owned by the student it names, or holding anything another
user made — says so in the log, and collects the latest submission that is the student's own work
throughout. In ``nbgrader_config.py``::

    c.ExchangeFactory.collect = "pe_course.steps.exchange_collect.OwnerCheckedCollect"

What the default exchange already gives, and what it needs from the server, is in the README
(shared server): a submission's folder cannot be found without its random part, feedback cannot be
found without the submission's secret, and both hold only while students cannot read each other's
home directories (``chmod 700``), where nbgrader keeps a copy of each submission with its secret.
"""

from __future__ import annotations

import glob
import os
import pwd

from nbgrader.exchange.default.collect import ExchangeCollect, groupby


def owner(path: str) -> str | None:
    """The unix user name that owns ``path``, or None."""
    try:
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
    except (OSError, KeyError):
        return None


def strangers(folder: str, maker: str | None) -> list[str]:
    """Who, other than ``maker``, made anything inside ``folder`` (names, sorted)."""
    found = set()
    for parent, dirs, files in os.walk(folder):
        for name in dirs + files:
            found.add(owner(os.path.join(parent, name)) or "an unknown user")
    return sorted(found - {maker})


def collector() -> str | None:
    """The unix user name running ``nbgrader collect``."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return None


class OwnerCheckedCollect(ExchangeCollect):
    """``nbgrader collect`` that ignores a submission whose folder is not owned by the student it names.

    A folder owned by the user who collects is taken too: on a one-account setup (a demo, a course whose
    students submit through the instructor's own server) every folder is theirs, and no student can make
    a folder the instructor owns."""

    def init_src(self) -> None:
        super().init_src()  # checks the course and the inbound directory, reads the due date
        student_id = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student_id}+{self.coursedir.assignment_id}+*")
        records = []
        me = collector()
        for path in glob.glob(pattern):
            record = self._path_to_record(path)
            found = owner(path)
            if found not in (record["username"], me):
                self.log.error(
                    "Not collected: %s names %s but was made by %s (a submission in another student's name)",
                    path,
                    record["username"],
                    found or "an unknown user",
                )
                continue
            others = strangers(path, found)
            if others:
                self.log.error(
                    "Not collected: %s holds files made by %s, not by %s (another user changed this submission)",
                    path,
                    ", ".join(others),
                    found,
                )
                continue
            records.append(record)
        self.src_records = []
        for group in groupby(records, lambda item: item["username"]).values():
            ordered = self._sort_by_timestamp(group)
            on_time = [r for r in ordered if self.duedate is not None and r["timestamp"] <= self.duedate]
            self.src_records.append(on_time[0] if (self.before_duedate and on_time) else ordered[0])


__all__ = ["OwnerCheckedCollect"]

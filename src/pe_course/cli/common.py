"""What every command needs first: the course named on the command line, its gradebook entry and a
fresh release/, each saying in one line why not."""

from __future__ import annotations

from pathlib import Path

from ..course import Course
from .terminal import console


def release_or_say(course: Course) -> Path | None:
    """Regenerate release/ (with its safety checks); None, after saying why, when it refuses."""
    from ..build.release import ReleaseError, refresh_release

    try:
        return refresh_release(course)
    except ReleaseError as exc:
        console.print(f"[red]{exc}[/]")
        return None


def course_of(args) -> Course:
    """The course directory and the assignment named on the command line (the only one if none is);
    an unknown assignment raises :class:`UnknownAssignment`, which :func:`.commands.main` prints in one line."""
    return Course.here(args.course, getattr(args, "assignment", None))


def assignment_ready(course: Course) -> bool:
    """The assignment's gradebook entry exists (added from source/ if not)."""
    from nbgrader.api import MissingEntry

    try:
        with course.gradebook() as gb:
            gb.find_assignment(course.assignment)
        return True
    except MissingEntry:
        pass
    console.print(
        f"The gradebook has no {course.assignment!r} yet (a fresh clone?): adding it from "
        "source/ with nbgrader generate_assignment."
    )
    return release_or_say(course) is not None

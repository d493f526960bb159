"""``pe-course export``: grades and feedback back to Canvas or Moodle, as files to upload."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from .common import assignment_ready, course_of
from .terminal import console


def cmd_export(args) -> int:
    """Grades and feedback back to an LMS: one grades file and one feedback zip to upload."""
    from ..lms.grades import ExportError
    from ..lms.upload import SOURCE_HELP, export, upload_lines

    course = course_of(args)
    if not assignment_ready(course):
        return 2
    out = Path(args.out) if args.out else course.root / "exports" / course.assignment
    source = Path(args.source)
    if not source.is_file():
        console.print(
            f"[red]No {args.lms} export at {escape(str(source))}[/]: {SOURCE_HELP[args.lms]} "
            "(guide: docs/lms-export.md#grades-and-feedback-back-to-canvas-and-moodle)"
        )
        return 2
    only = None
    if args.changed_only:
        from ..round.regrade import latest_changed

        changed = latest_changed(course)
        if not changed:
            console.print("[red]Nothing exported[/]: no regrade changed any student (see pe-course report).")
            return 2
        only = set(changed)
        out = out if args.out else out / "changed"  # the full export stays as it was
    try:
        files, notes = export(course, args.lms, source, out, args.column or "", args.allow_missing, only)
    except (ExportError, FileNotFoundError) as exc:
        console.print(
            f"[red]Nothing exported[/]: {escape(str(exc))} "
            "(guide: docs/lms-export.md#refused-before-anything-is-written)",
            soft_wrap=True,
        )
        return 2
    for note in notes:
        console.print(f"  - {escape(note)}", soft_wrap=True)
    shown = [f.relative_to(course.root) if f.is_relative_to(course.root) else f for f in files]
    for line in upload_lines(args.lms, shown):
        console.print(escape(line), soft_wrap=True)
    console.print(f"Points of every graded cell, for your own analysis: {shown[2]}", soft_wrap=True)
    return 0

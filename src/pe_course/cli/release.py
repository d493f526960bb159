"""``pe-course release`` and ``pe-course build``: release/ regenerated, after the graders validate themselves."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.table import Table

from .common import course_of, release_or_say
from .terminal import console, isolation_line


def cmd_release(args) -> int:
    from ..build.release import release_diff

    course = course_of(args)
    if args.check:
        differ = release_diff(course)
        if differ:
            console.print(
                f"[red]release/ is out of date[/]: {', '.join(differ)} — run `pe-course release` "
                "(guide: docs/authoring.md#adding-a-notebook-or-an-assignment)"
            )
            return 1
        console.print("release/ matches a fresh `nbgrader generate_assignment`.")
        return 0
    path = release_or_say(course)
    if path is None:
        return 1
    console.print(f"Released {len(list(path.glob('*.ipynb')))} notebooks to {path.relative_to(course.root)}")
    return 0


def cmd_build(args) -> int:
    from ..build.self_validation import released_stubs, run_selfcheck
    from ..sandbox import Sandbox

    course = course_of(args)
    line = isolation_line(False, trusted="reference solutions, stubs and misconceptions")
    assert line is not None  # the project's own code may run without bubblewrap
    console.print(line)
    sandbox = Sandbox(unisolated=True)  # bubblewrap when it works (the line above says which)
    with (
        tempfile.TemporaryDirectory(prefix="pe-course-build-") as scratch,
        console.status("Self-validating the graders (reference, stubs, misconceptions)…"),
    ):
        report = run_selfcheck(course, sandbox, released_stubs(course, Path(scratch)))
    table = Table("check", "subject", "result", title="Graders' self-validation")
    for row in report.rows:
        table.add_row(*row)
    console.print(table)
    if not report.ok:
        console.print("[red]Refusing to release:[/]")
        for problem in report.problems:
            console.print(f"  - {problem}")
        return 1
    path = release_or_say(course)
    if path is None:
        return 1
    console.print(f"[green]Self-validation passed[/]; released to {path.relative_to(course.root)}")
    return 0

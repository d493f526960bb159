"""What the course grades, generated from the notebooks: the points table of ``docs/notebooks.md``.

The points of each graded cell live in the source notebooks' nbgrader metadata; the table in
``docs/notebooks.md`` is produced from them (``python -m pe_course.build.points_table --write``) and
``tests/build/test_release.py`` checks that the page carries exactly what this prints.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from ..course.notebooks import grade_id, nbgrader_meta, source_notebooks

POINTS_BEGIN, POINTS_END = "<!-- points-table:start -->", "<!-- points-table:end -->"


def graded_cells(source_dir: Path) -> list[tuple[str, str, bool, float]]:
    """(notebook, grade id, written by hand?, points) for every graded cell, in notebook order."""
    rows = []
    for path in source_notebooks(source_dir):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = nbgrader_meta(cell)
            if meta.get("grade"):
                rows.append(
                    (path.stem, grade_id(cell) or "", bool(meta.get("solution")), float(meta["points"]))
                )
    return rows


def notebook_points(source_dir: Path) -> dict[str, float]:
    """{notebook: its points} (graded cells, hand-graded ones included), in notebook order."""
    totals: dict[str, float] = {}
    for notebook, _, _, pts in graded_cells(source_dir):
        totals[notebook] = totals.get(notebook, 0.0) + pts
    return totals


def total_points(source_dir: Path) -> float:
    """The assignment's maximum score: the points of all its graded cells."""
    return sum(notebook_points(source_dir).values())


def points_table(source_dir: Path) -> str:
    """The points table (markdown), one row per graded cell and a total per notebook."""
    rows = graded_cells(source_dir)
    lines = ["| notebook | cell | graded | points |", "|---|---|---|---|"]
    auto = manual = 0.0
    for notebook in dict.fromkeys(name for name, *_ in rows):
        cells = [(gid, written, pts) for name, gid, written, pts in rows if name == notebook]
        for gid, written, pts in cells:
            how = "manual (written answer, rubric in formgrader)" if written else "auto (hidden graders)"
            lines.append(f"| {notebook} | `{gid}` | {how} | {pts:g} |")
            manual, auto = (manual + pts, auto) if written else (manual, auto + pts)
        lines.append(f"| **{notebook}** | | | **{sum(p for *_, p in cells):g}** |")
    lines.append(f"| **total** | | {auto:g} auto + {manual:g} manual | **{auto + manual:g}** |")
    return "\n".join(lines)


def readme_points_table(readme: Path) -> str:
    """The table between the points-table markers of a page (``docs/notebooks.md``)."""
    text = readme.read_text(encoding="utf-8")
    return text.split(POINTS_BEGIN, 1)[1].split(POINTS_END, 1)[0].strip()


def write_readme_points_table(readme: Path, table: str) -> None:
    """Replace the table between a page's points-table markers."""
    text = readme.read_text(encoding="utf-8")
    before, rest = text.split(POINTS_BEGIN, 1)
    after = rest.split(POINTS_END, 1)[1]
    readme.write_text(f"{before}{POINTS_BEGIN}\n{table}\n{POINTS_END}{after}", encoding="utf-8")


if __name__ == "__main__":  # python -m pe_course.build.points_table [--assignment NAME] [--write [PAGE.md]]
    import argparse

    from ..course import Course, UnknownAssignment

    parser = argparse.ArgumentParser(
        prog="python -m pe_course.build.points_table",
        description="An assignment's points table, from its notebooks.",
    )
    parser.add_argument("--assignment", help="a folder of source/ (default: the course's only assignment)")
    parser.add_argument(
        "--write",
        nargs="?",
        const="",
        metavar="PAGE.md",
        help="write it between the page's points-table markers (default: the course's docs/notebooks.md)",
    )
    args = parser.parse_args()
    try:
        course = Course.here(assignment=args.assignment)
    except UnknownAssignment as exc:
        parser.exit(2, f"{exc}\n")
    table = points_table(course.source)
    if args.write is None:
        print(table)
    else:
        page = Path(args.write) if args.write else course.root / "docs" / "notebooks.md"
        write_readme_points_table(page, table)

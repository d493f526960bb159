"""The documentation site in docs/: it builds with no warning, every page is reachable from the index,
the instructor guide's round runs as written, and every `pe-course` command the pages show parses."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import REPO, TOTAL_POINTS, bash_blocks

DOCS = REPO / "docs"
GUIDE = DOCS / "instructor-guide.md"


def _build(source: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Sphinx as CI runs it: warnings are errors (-W), every one reported (--keep-going), references
    checked (-n)."""
    from sphinx.cmd.build import build_main

    code = build_main(["-W", "--keep-going", "-n", "-q", "-b", "html", str(source), str(out)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_site_builds_without_a_warning(tmp_path, capsys):
    code, output = _build(DOCS, tmp_path / "html", capsys)
    assert code == 0 and "WARNING" not in output, output
    pages = {p.stem for p in DOCS.glob("*.md")}
    built = {p.stem for p in (tmp_path / "html").glob("*.html")}
    assert pages <= built, f"pages not built: {sorted(pages - built)}"


def test_a_page_missing_from_the_index_or_a_broken_link_fails_the_build(tmp_path, capsys):
    """The build above would catch them: an orphan page and a link to a page that does not exist."""
    copy = tmp_path / "docs"
    shutil.copytree(DOCS, copy, ignore=shutil.ignore_patterns("_build"))
    (copy / "orphan.md").write_text("# Orphan\n\nIn no toctree.\n", encoding="utf-8")
    code, output = _build(copy, tmp_path / "html", capsys)
    assert code != 0 and "isn't included in any toctree" in output, output
    (copy / "orphan.md").unlink()
    page = copy / "lms.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8"
    )
    code, output = _build(copy, tmp_path / "html2", capsys)
    assert code != 0 and "no-such-page" in output, output


def test_the_docs_mention_every_cli_command():
    from pe_course.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps them here
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    missing = [name for name in commands if f"pe-course {name}" not in text]
    assert not missing, f"no page of docs/ mentions: {missing}"


def test_the_student_guide_is_in_indonesian_and_follows_the_glossary():
    """Formal Indonesian ("Anda"), none of the phrases docs/glossary.md bans from released notebooks."""
    text = (DOCS / "panduan-mahasiswa.md").read_text(encoding="utf-8")
    glossary = (DOCS / "glossary.md").read_text(encoding="utf-8")
    block = glossary.split("<!-- banned:start -->", 1)[1].split("<!-- banned:end -->", 1)[0]
    banned = [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]
    assert "kamu" in banned
    found = [phrase for phrase in banned if re.search(rf"\b{re.escape(phrase.lower())}\b", text.lower())]
    assert not found, f"docs/panduan-mahasiswa.md: {found} (see docs/glossary.md for the term to use)"
    assert text.count("Anda") >= 10
    for step in ("Ambil tugas", "Jalankan semua sel", "Klik Validate", "Kumpulkan", "Baca umpan balik"):
        assert step in text, step


def _pe_course_commands() -> list[tuple[str, str]]:
    """Every `pe-course ...` command in a bash block of README.md or docs/, with its page."""
    found = []
    for page in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        for block in bash_blocks(page):
            for line in block.splitlines():
                for part in re.split(r"&&|;", line.split(" #")[0]):
                    if part.strip().startswith("pe-course "):
                        found.append((page.name, part.strip()))
    return found


def test_every_pe_course_command_in_the_docs_parses():
    from pe_course.cli import build_parser

    commands = _pe_course_commands()
    assert len(commands) >= 9, commands  # the demo, the round's six, the Dask round at least
    for page, command in commands:
        try:
            build_parser().parse_args(shlex.split(command)[1:])
        except SystemExit as exc:
            pytest.fail(f"{page}: `{command}` does not parse ({exc})")


@pytest.mark.xdist_group("built-clone")
def test_the_guides_instructor_round_runs_as_written_on_a_fresh_copy(built_clone):
    """The instructor guide's round, line by line, in a copy of what a clone holds (no gradebook yet); the
    interactive formgrader is exercised by tests/e2e/test_instructor_round.py. Its first line, `pe-course
    build`, is the ``built_clone`` fixture's (shared with tests/build/test_self_validation.py)."""
    import os
    import subprocess
    import sys

    import nbformat
    from conftest import reference_nb

    from pe_course.lms.intake import canvas_name, lms_zip

    text = GUIDE.read_text(encoding="utf-8")
    block = next(c for c in bash_blocks(GUIDE) if c.startswith("pe-course build"))
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    assert [line.split()[1] for line in lines] == [
        "build",
        "zip_collect",
        "grade",
        "formgrader",
        "feedback",
        "report",
        "export",
    ], text[:0]
    root, build = built_clone
    assert lines[0] == "pe-course build", lines[0]
    assert build.returncode == 0, f"{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    nb = nbformat.writes(reference_nb("01_embedding")).encode()
    lms_zip(
        root / "downloaded" / "positional-encoding" / "archive" / "download.zip",
        {
            canvas_name("ani", 1, 2, "01_embedding.ipynb"): nb,
            canvas_name("budi", 3, 4, "01_embedding (1).ipynb"): nb,
        },
    )
    (root / "canvas-gradebook.csv").write_text(  # as Canvas's Grades → Export writes it
        "Student,ID,SIS User ID,SIS Login ID,Section,Positional Encoding (77),Current Score\n"
        f"    Points Possible,,,,,{TOTAL_POINTS:.2f},(read only)\n"
        "ani,1,,ani,TI-A,,\nbudi,3,,budi,TI-A,,\n",
        encoding="utf-8",
    )
    bindir = os.path.dirname(sys.executable)
    for line in lines[1:]:
        if line.startswith("pe-course formgrader"):
            continue
        argv = line.split()
        proc = subprocess.run(
            [os.path.join(bindir, argv[0]), *argv[1:]],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=540,
            env={**os.environ, "COLUMNS": "200"},
            check=False,
        )
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stdout + proc.stderr, line
        if argv[1] == "export":  # nobody graded the written answers (formgrader skipped): blank, named
            assert proc.stdout.count("written answer(s) not graded yet") == 2, proc.stdout
    assert (root / "feedback-zips" / "positional-encoding" / "ani.zip").is_file()
    exports = root / "exports" / "positional-encoding"
    assert {p.name for p in exports.iterdir()} == {
        "canvas-grades-import.csv",
        "canvas-feedback.zip",
        "cell-points.csv",
    }
    assert {p.name for p in (root / "reports" / "positional-encoding").iterdir()} >= {
        "report.html",
        "grades.csv",
    }


GUIDE_LINK = re.compile(r"docs/([\w-]+)\.md#([\w-]+)")


def _anchors(page: Path) -> set[str]:
    """The anchors MyST gives the page's headings (``myst_heading_anchors``), as GitHub does too."""
    titles = re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", t.replace("`", "").strip().lower()).replace(" ", "-") for t in titles}


def _resolves(page: str, anchor: str) -> bool:
    return (DOCS / f"{page}.md").is_file() and anchor in _anchors(DOCS / f"{page}.md")


def test_every_commands_help_has_examples_that_parse_and_a_guide_page_that_exists():
    """`pe-course COMMAND --help` is written for an instructor: what it does, examples (each parses as
    the command), and the page of docs/ that explains it (docs/commands.md renders the same help)."""
    from pe_course.cli import build_parser
    from pe_course.cli.help import COMMANDS

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert set(commands) == set(COMMANDS)
    for name, sub in commands.items():
        text = sub.format_help()
        assert COMMANDS[name].description.split()[0] in text, name
        examples = text.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert examples, name
        for line in examples:
            argv = shlex.split(line.split(" # ")[0])
            argv = argv[1:] if argv[0] == "sudo" else argv
            assert argv[:2] == ["pe-course", name], line
            parser.parse_args(argv[1:])  # exits (and fails the test) if it does not parse
        (link,) = GUIDE_LINK.findall(text.split("guide: ", 1)[1])
        assert _resolves(*link), f"{name}: docs/{link[0]}.md has no heading #{link[1]}"
    assert "commands" in (DOCS / "index.md").read_text(encoding="utf-8")


def test_every_guide_link_the_package_prints_resolves():
    """Errors that name a fix link the page that explains it; no such link may point nowhere."""
    from pe_course.sandbox import policy

    links = {
        (str(path.relative_to(REPO)), *link)
        for path in (REPO / "src" / "pe_course").rglob("*.py")
        for link in GUIDE_LINK.findall(path.read_text(encoding="utf-8"))
    }
    assert len(links) >= 8, links  # the refusals, the release check, the course, the Dask scheduler, ...
    broken = [link for link in links if not _resolves(*link[1:])]
    assert not broken, broken
    for refusal in (policy.refusal("bubblewrap (bwrap) is not installed"), policy.group_refusal()):
        assert GUIDE_LINK.search(refusal), refusal

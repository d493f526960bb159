"""The package's shape (STYLE.md principles 10 and 16): no import cycle anywhere in ``src/pe_course``
(function-local imports included: a cycle dodged by importing inside a function is still a cycle),
and small modules: in ``src/pe_course`` and in the graders (``graders/`` and the toy assignment's)."""

from __future__ import annotations

from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "pe_course"
MAX_LINES = 450
# One notebook's graders are one folder of small files (graders/<assignment>/<notebook>/, issue 33):
# a file that grows past this is split by concern (checks_rope.py beside checks.py), not by length.
GRADERS = (REPO / "graders", REPO / "tests" / "fixtures" / "course" / "graders")
MAX_GRADER_LINES = 300
MAX_ENGINE_LINES = 350  # engine/ and public_checks/ (issue 33's limit, ahead of the rest)
# Modules still over the limit, with where their split is tracked. Empty this as they are split.
OVER_LIMIT: dict[str, str] = {}


def test_no_import_cycles():
    graph = grimp.build_graph("pe_course")  # every import statement, at any depth
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                cycles.add(" -> ".join((module, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))


def test_no_module_over_the_size_limit():
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES and name not in OVER_LIMIT}
    assert not over, f"modules over {MAX_LINES} lines (split them by concern): {over}"
    settled = {name for name in OVER_LIMIT if sizes.get(name, 0) <= MAX_LINES}
    assert not settled, f"split or gone, so no longer an exception: remove from OVER_LIMIT: {settled}"


def test_the_engine_and_the_shipped_checks_are_small_modules():
    """Where a score is decided is read often: its modules keep under the limit issue 33 sets for all."""
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for folder in (PACKAGE / "engine", PACKAGE / "public_checks")
        for path in folder.glob("*.py")
    }
    over = {name: lines for name, lines in sizes.items() if lines > MAX_ENGINE_LINES}
    assert not over, f"modules over {MAX_ENGINE_LINES} lines (split them by concern): {over}"


def test_no_grader_file_over_the_size_limit():
    sizes = {
        str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
        for folder in GRADERS
        for path in folder.rglob("*.py")
    }
    assert len(sizes) > 20, "the graders were not found"
    over = {name: lines for name, lines in sizes.items() if lines > MAX_GRADER_LINES}
    assert not over, f"grader files over {MAX_GRADER_LINES} lines (split them by concern): {over}"


# Who may import whom (issue 33): what ships to students and what runs inside bubblewrap imports nothing
# above it, the record does not import the sandbox, and nothing but the command's entry points imports it.
MAY_IMPORT = {
    "pe_course.public_checks": set(),  # shipped verbatim beside the notebooks: stdlib and NumPy only
    "pe_course.sandbox": {"pe_course.public_checks", "pe_course.record", "pe_course.interruption"},
    "pe_course.interruption": set(),  # Ctrl-C and kill: signal handling under everything
    "pe_course.build.precision": set(),
    "pe_course.record": {"pe_course.public_checks"},  # the feedback's words are the public checks'
    # the one place a score is decided: the graders' vocabulary, the charging rule it ships, the student's
    # code in the sandbox, and the record it returns
    "pe_course.engine": {
        "pe_course.public_checks",
        "pe_course.sandbox",
        "pe_course.record",
        "pe_course.notebook",
    },
}
# What grading never reaches, not even through another module: the autograde step that calls it, the
# round around it, the release and self-validation that call it, the command, and nbgrader.
ENGINE_NEVER_REACHES = (
    "pe_course.steps",
    "pe_course.round",
    "pe_course.build",
    "pe_course.cli",
    "nbgrader",
)
# The record is what every view reads: it imports none of them, nor what grades or runs (issue 33).
NEVER_IMPORTS = {
    "pe_course.record": {
        "pe_course.sandbox",
        "pe_course.engine",
        "pe_course.steps",
        "pe_course.round",
        "pe_course.build",
        "pe_course.report",
        "pe_course.cli",
        "pe_course.lms",
    },
    "pe_course.engine": {p for p in ENGINE_NEVER_REACHES if p.startswith("pe_course.")},
    # the round owns the runner interface; the command chooses the runner and hands it over
    "pe_course.round": {"pe_course.runners", "pe_course.cli"},
    "pe_course.runners": {"pe_course.cli"},
    # building a release grades the reference and the stubs, but runs no round and no nbgrader step
    "pe_course.build": {"pe_course.round", "pe_course.steps", "pe_course.cli"},
}


def _imported_packages(graph, package: str) -> set[str]:
    """The pe_course modules and packages (top level) that ``package`` imports, itself excepted."""
    inside = {package, *graph.find_descendants(package)} if graph.find_children(package) else {package}
    imported = {m for module in inside for m in graph.find_modules_directly_imported_by(module)}
    return {".".join(m.split(".")[:2]) for m in imported if m.startswith("pe_course.")} - {package}


def test_lower_layers_import_nothing_above_them():
    graph = grimp.build_graph("pe_course")
    wrong = {
        package: sorted(_imported_packages(graph, package) - allowed)
        for package, allowed in MAY_IMPORT.items()
        if _imported_packages(graph, package) - allowed
    }
    wrong |= {
        package: sorted(_imported_packages(graph, package) & banned)
        for package, banned in NEVER_IMPORTS.items()
        if _imported_packages(graph, package) & banned
    }
    assert not wrong, f"imports across layers: {wrong}"
    importers = {".".join(m.split(".")[:2]) for m in graph.find_modules_that_directly_import("pe_course.cli")}
    assert importers <= {"pe_course.cli"}, (
        f"only the command's entry points import pe_course.cli: {importers}"
    )


def test_grading_reaches_no_step_round_release_command_or_nbgrader():
    graph = grimp.build_graph("pe_course", include_external_packages=True, cache_dir=None)
    reached = {
        target: sorted(" -> ".join(chain) for chain in graph.find_shortest_chains("pe_course.engine", target))
        for target in ENGINE_NEVER_REACHES
        if target in graph.modules
    }
    assert not any(reached.values()), f"pe_course.engine reaches: { {t: c for t, c in reached.items() if c} }"

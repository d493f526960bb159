"""The package's shape (STYLE.md principles 10 and 16): no import cycle anywhere in ``src/pe_course``
(function-local imports included: a cycle dodged by importing inside a function is still a cycle),
and small modules: in ``src/pe_course`` and in the graders (``graders/`` and the toy assignment's)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "pe_course"
MAX_LINES = 350  # issue 33: a module a newcomer reads at once; graders/ keep to MAX_GRADER_LINES
# One notebook's graders are one folder of small files (graders/<assignment>/<notebook>/, issue 33):
# a file that grows past this is split by concern (checks_rope.py beside checks.py), not by length.
GRADERS = (REPO / "graders", REPO / "tests" / "fixtures" / "course" / "graders")
MAX_GRADER_LINES = 300
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


def test_no_grader_file_over_the_size_limit():
    sizes = {
        str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
        for folder in GRADERS
        for path in folder.rglob("*.py")
    }
    assert len(sizes) > 20, "the graders were not found"
    over = {name: lines for name, lines in sizes.items() if lines > MAX_GRADER_LINES}
    assert not over, f"grader files over {MAX_GRADER_LINES} lines (split them by concern): {over}"


# Who may import whom (issue 33), every package of the house from the ground up: a package imports only
# those named on its line, all of them on lines above it (so no import runs back up, and a new package must
# be given its place here). docs/architecture.md draws the same table.
MAY_IMPORT: dict[str, set[str]] = {
    "public_checks": set(),  # shipped verbatim beside the notebooks: stdlib and NumPy only
    "interruption": set(),  # Ctrl-C and kill: signal handling under everything
    "record": {"public_checks"},  # what every view reads; the feedback's words are the public checks'
    "sandbox": {"public_checks", "record", "interruption"},  # where student code runs
    "course": {"public_checks", "sandbox"},  # the course directory, its notebooks, clauses and data files
    # the one place a score is decided: the graders' vocabulary, the charging rule it ships, the student's
    # code in the sandbox, the course's notebooks, and the record it returns
    "engine": {"public_checks", "record", "sandbox", "course"},
    "build": {"public_checks", "interruption", "sandbox", "course", "engine"},  # release, self-validation
    "steps": {"record", "sandbox", "course", "engine"},  # nbgrader's pipeline, one step a module
    # the round owns the runner interface; the command chooses the runner and hands it over
    "round": {"interruption", "record", "sandbox", "course", "steps"},
    "runners": {"interruption", "sandbox", "course", "round"},
    "lms": {"course"},
    "report": {"record", "course", "lms"},
    "cli": {"public_checks", "interruption", "record", "sandbox", "course", "engine", "build", "steps", "round",
            "runners", "lms", "report"},
}  # fmt: skip
# What grading never reaches, not even through another module: the autograde step that calls it, the
# round around it, the release and self-validation that call it, the command, and nbgrader.
ENGINE_NEVER_REACHES = ("pe_course.steps", "pe_course.round", "pe_course.build", "pe_course.cli", "nbgrader")


def _imported_packages(graph, package: str) -> set[str]:
    """The pe_course packages (top level, without the prefix) that ``package`` imports, itself excepted."""
    inside = {package, *graph.find_descendants(package)} if graph.find_children(package) else {package}
    imported = {m for module in inside for m in graph.find_modules_directly_imported_by(module)}
    return {m.split(".")[1] for m in imported if m.startswith("pe_course.")} - {package.split(".")[1]}


def test_the_layers_are_a_ladder():
    order = list(MAY_IMPORT)
    upward = {
        package: sorted(allowed - set(order[: order.index(package)]))
        for package, allowed in MAY_IMPORT.items()
        if allowed - set(order[: order.index(package)])
    }
    assert not upward, f"a package may import only packages on lines above its own: {upward}"


def test_every_package_imports_only_what_its_layer_allows():
    graph = grimp.build_graph("pe_course", cache_dir=None)
    top = {module.split(".")[1] for module in graph.modules if module != "pe_course"}
    assert top - {"__main__"} == set(MAY_IMPORT), (
        f"every package has its line in MAY_IMPORT: missing {sorted(top - set(MAY_IMPORT))}, "
        f"gone {sorted(set(MAY_IMPORT) - top)}"
    )
    wrong = {
        package: sorted(_imported_packages(graph, f"pe_course.{package}") - allowed)
        for package, allowed in MAY_IMPORT.items()
        if _imported_packages(graph, f"pe_course.{package}") - allowed
    }
    assert not wrong, f"imports across layers: {wrong}"


def test_grading_reaches_no_step_round_release_command_or_nbgrader():
    graph = grimp.build_graph("pe_course", include_external_packages=True, cache_dir=None)
    reached = {
        target: sorted(" -> ".join(chain) for chain in graph.find_shortest_chains("pe_course.engine", target))
        for target in ENGINE_NEVER_REACHES
        if target in graph.modules
    }
    assert not any(reached.values()), f"pe_course.engine reaches: { {t: c for t, c in reached.items() if c} }"


INSIDE = PACKAGE / "sandbox" / "inside"
# What the scripts inside bubblewrap may import besides the standard library and each other (by plain
# name: they run as scripts, ``python worker.py``): NumPy, and for the notebook runner nbclient's stack.
INSIDE_MAY_IMPORT = {"numpy", "nbclient", "nbformat", "jupyter_client", "jupyter_core", "traitlets"}


def test_what_runs_inside_bubblewrap_imports_nothing_of_the_package_outside_it():
    graph = grimp.build_graph("pe_course")
    inside = {"pe_course.sandbox.inside", *graph.find_descendants("pe_course.sandbox.inside")}
    outside = {
        f"{module} -> {imported}"
        for module in inside
        for imported in graph.find_modules_directly_imported_by(module)
        if imported not in inside and not imported.startswith("pe_course.public_checks")
    }
    assert not outside, f"sandbox/inside imports the package outside it: {sorted(outside)}"
    siblings = {path.stem for path in INSIDE.glob("*.py")}
    for path in INSIDE.glob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0 or path.name == "__init__.py", (
                    f"{path.name}: a relative import in a script"
                )
                names.add((node.module or "").split(".")[0])
        foreign = names - set(sys.stdlib_module_names) - siblings - INSIDE_MAY_IMPORT - {""}
        assert not foreign, f"{path.name} (runs inside bubblewrap) imports {sorted(foreign)}"


def test_every_script_the_host_copies_into_a_sandbox_is_where_it_reads_it():
    """The host reads the scripts by path (a move once left it reading a file that was gone): every
    ``"<name>.py"`` the sandbox's host side and the steps name is a file of sandbox/inside/."""
    named = {
        match
        for folder in (PACKAGE / "sandbox", PACKAGE / "steps")
        for path in folder.glob("*.py")
        for match in re.findall(r"[\"'](\w+\.py)[\"']", path.read_text(encoding="utf-8"))
    }
    assert {"worker.py", "codec.py", "nbexec.py", "zygote.py"} <= named
    missing = sorted(name for name in named if not (INSIDE / name).is_file())
    assert not missing, f"named as scripts to copy into a sandbox, but not in sandbox/inside/: {missing}"


def test_every_module_the_architecture_page_names_exists():
    """docs/architecture.md is where a newcomer starts: its package map names only what is there."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    text = page[
        page.index("## The package map") : page.index("## The pipeline")
    ]  # the map, the runtimes, the wiring
    files = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    names = {Path(f).name for f in files}
    folders = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*") if p.is_dir()}
    missing = []
    for ref in set(re.findall(r"`([\w/]+\.py)(?::\w+(?:\.\w+)?)?`", text)):
        known = files if "/" in ref else names
        if ref not in known and not (REPO / ref).is_file():
            missing.append(ref)
    for ref in set(re.findall(r"`([a-z_]+(?:/[a-z_]+)*)/`", text)):
        if ref not in folders and not (REPO / ref).is_dir():
            missing.append(ref + "/")
    for dotted in set(re.findall(r"\bpe_course(?:\.\w+)+", text)):
        parts = dotted.split(".")
        found = any(
            (PACKAGE.parent / "/".join(parts[:n])).with_suffix(".py").is_file()
            or (PACKAGE.parent / "/".join(parts[:n]) / "__init__.py").is_file()
            for n in (len(parts), len(parts) - 1)  # a module, or a name in one
        )
        if not found:
            missing.append(dotted)
    assert not missing, f"docs/architecture.md names what is not in src/pe_course: {sorted(missing)}"


def _absolute(node: ast.ImportFrom, path: Path) -> str:
    """The module a ``from … import`` in ``path`` (a module of src/pe_course) names, made absolute."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    if node.level:
        package = package[: len(package) - (node.level - 1)]
        return ".".join([*package, *([node.module] if node.module else [])])
    return node.module or ""


def test_every_import_of_the_package_resolves():
    """Function-local imports included: mypy does not follow them to a module that is gone (its config
    ignores missing imports), and a move of a module once left four of them pointing at its old home."""
    import importlib
    import importlib.util

    broken = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "inside" in path.relative_to(PACKAGE).parts:
            continue  # scripts run inside bubblewrap import each other by plain name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not _absolute(node, path).startswith("pe_course"):
                continue
            module = _absolute(node, path)
            try:
                imported = importlib.import_module(module)
            except ImportError as exc:
                broken.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {module} ({exc})")
                continue
            for alias in node.names:
                name = f"{module}.{alias.name}"
                if not hasattr(imported, alias.name) and importlib.util.find_spec(name) is None:
                    broken.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {module} has no {alias.name}")
    assert not broken, "imports that do not resolve:\n" + "\n".join(broken)

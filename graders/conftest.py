"""pytest front end for the hidden graders.

``pytest graders`` grades the reference solutions (source notebooks with the solution markers
removed) and must pass 100%. ``pytest graders --submission PATH`` grades a submitted notebook or a
student's assignment folder: one test per check, named ``<notebook>::test_<function>::<check>``.
Student code runs in the sandbox; ``--no-bwrap`` forces the rlimits-only fallback.
"""

from __future__ import annotations

from pathlib import Path


def pytest_addoption(parser):
    group = parser.getgroup("pe-course graders")
    group.addoption("--submission", action="append", default=[], metavar="PATH",
                    help="notebook (.ipynb) or assignment folder to grade; default: the reference solutions")
    group.addoption("--no-bwrap", action="store_true", help="do not use bubblewrap even when it is installed")


def submission_notebooks(config) -> list[tuple[str, Path | None]]:
    """(notebook id, path) pairs; path None means the reference solution of that notebook."""
    paths = [Path(p) for p in config.getoption("--submission")]
    if not paths:
        source = Path(__file__).resolve().parents[1] / "source" / "positional-encoding"
        return [(p.stem, None) for p in sorted(source.glob("*.ipynb"))]
    found = []
    for path in paths:
        if path.is_dir():
            found += [(p.stem, p) for p in sorted(path.glob("*.ipynb"))]
        else:
            found.append((path.stem, path))
    return found

"""pytest front end for the hidden graders.

``pytest graders`` grades the reference solutions (source notebooks with the solution markers
removed) and must pass 100%. ``pytest graders --submission PATH`` grades a submitted notebook or a
student's assignment folder: one test per check, named ``<notebook>::test_<function>::<check>``.
``--assignment NAME`` says whose graders (``graders/<assignment>/``, ``c.ScoreWithGraders.graders_dir``)
and notebooks; without it, the reference solutions of every assignment of the course (tests named
``<assignment>/<notebook>::…`` when there are several), and a ``--submission`` of the course's only
assignment (a usage error naming them when it has several).
Student code runs in the sandbox. Without working bubblewrap, grading a ``--submission`` is refused
(one line, before anything runs) unless ``--unisolated`` says it is trusted code; the reference
solutions are the project's own code and run either way (the header says how). ``--no-bwrap`` forces
the fallback even where bubblewrap works (trusted code only). Likewise where no resource group can be
made for each run (an ordinary user without ``sudo pe-course setup-groups --user NAME``): a
``--submission`` is refused unless ``--without-resource-groups`` accepts that risk.
"""

from __future__ import annotations

from pathlib import Path


def pytest_addoption(parser):
    group = parser.getgroup("pe-course graders")
    group.addoption(
        "--assignment",
        default=None,
        metavar="NAME",
        help="the assignment whose graders run (a folder of source/); default: every assignment's "
        "reference solutions, or the only assignment's --submission",
    )
    group.addoption(
        "--submission",
        action="append",
        default=[],
        metavar="PATH",
        help="notebook (.ipynb) or assignment folder to grade; default: the reference solutions",
    )
    group.addoption(
        "--unisolated",
        action="store_true",
        help="TRUSTED CODE ONLY: grade a --submission even where bubblewrap does not work (refused otherwise)",
    )
    group.addoption(
        "--without-resource-groups",
        action="store_true",
        help="grade a --submission even where no resource group can be made for each run (refused "
        "otherwise; see pe-course grade --help)",
    )
    group.addoption(
        "--no-bwrap",
        action="store_true",
        help="do not use bubblewrap even when it is installed (trusted code only; implies --unisolated)",
    )


def unisolated(config) -> bool:
    """Whether this run may grade without bubblewrap: asked for, or only the reference solutions."""
    return bool(
        config.getoption("--unisolated")
        or config.getoption("--no-bwrap")
        or not config.getoption("--submission")
    )


def ungrouped(config) -> bool:
    """Whether this run may grade without a resource group per run (asked for by name)."""
    return bool(config.getoption("--without-resource-groups"))


def courses_of(config) -> list:
    """The assignments of this run, as :class:`pe_course.course.Course`: ``--assignment``; without it
    every assignment for the reference solutions, and the course's only one for a ``--submission``.
    An unknown or missing name is a one-line usage error."""
    import pytest

    from pe_course.course import Course, UnknownAssignment, assignment_of, assignments

    root = Path(__file__).resolve().parents[1]
    name = config.getoption("--assignment")
    try:
        if name or config.getoption("--submission"):
            return [Course(root, assignment_of(root, name))]
        return [Course(root, a) for a in assignments(root)] or [Course(root, assignment_of(root))]
    except UnknownAssignment as exc:
        raise pytest.UsageError(f"{exc} (pytest graders --assignment NAME)") from None


def submission_notebooks(config) -> list[tuple[object, str, Path | None]]:
    """(course, notebook id, path) triples; path None means the reference solution of that notebook.

    A renamed notebook (``01_embedding (1).ipynb``) is graded as the notebook it stands for; a path
    that does not exist, or holds nothing gradable, is a usage error (never "1 skipped").
    """
    import pytest

    from pe_course.lms.intake import canonical_notebook

    paths = [Path(p) for p in config.getoption("--submission")]
    courses = courses_of(config)
    if not paths:
        return [(course, name, None) for course in courses for name in course.notebooks]
    (course,) = courses
    notebooks = course.notebooks
    found = []
    for path in paths:
        if not path.exists():
            raise pytest.UsageError(f"--submission {path}: no such file or folder")
        files = sorted(path.glob("*.ipynb")) if path.is_dir() else [path]
        gradable = [(canonical_notebook(p.name, notebooks, course.other_notebooks), p) for p in files]
        for name, p in gradable:
            if name is None:
                raise pytest.UsageError(
                    f"--submission {p}: not one of the assignment's notebooks ({', '.join(notebooks)})"
                )
        if not gradable:
            raise pytest.UsageError(f"--submission {path}: no notebooks in this folder")
        found += [(course, name, p) for name, p in gradable]
    return found


def pytest_configure(config):
    import pytest

    from pe_course.sandbox import policy, selftest

    submission_notebooks(config)  # an assignment or a path that cannot be graded: a usage error first
    try:
        selftest.check(unisolated=unisolated(config), ungrouped=ungrouped(config))
    except policy.IsolationUnavailable as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config):
    from pe_course.sandbox import Sandbox

    sandbox = (
        Sandbox(use_bwrap=False)
        if config.getoption("--no-bwrap")
        else Sandbox(unisolated=unisolated(config), ungrouped=ungrouped(config))
    )
    return f"pe-course sandbox: {sandbox.isolation}"

"""A grader suite, found by folder: ``graders/<assignment>/`` (``c.ScoreWithGraders.graders_dir``).

The one rule (docs/authoring.md, "Where a notebook's graders live"):

- every folder of the suite whose name does not start with ``_`` belongs to the notebook of that name
  (``01_embedding/`` grades ``source/<assignment>/01_embedding.ipynb``);
- every ``.py`` file of a notebook folder is imported, in file-name order, and what it declares with
  :mod:`pe_course.engine.declarations` or :func:`pe_course.course.clauses.domain` belongs to that notebook: checks
  (``@check``; a notebook's functions are graded in the order their first checks are declared),
  classes of input (``graded(...)``), compositions (``@builds_on``), misconceptions
  (``@misconception``), contract domains (``@domain``) and the self-validation's students
  (``@alternative``, ``@careful``, ``@flawed``);
- a graded function's example cases are ``cases/<function>.json`` in its notebook's folder;
- ``_shared/`` holds what several notebooks use and declares nothing; its ``properties.py`` (the
  properties needing no reference) ships verbatim as the release's ``public_checks/properties.py``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..course.notebooks import test_cell_ids
from ..public_checks import Clause
from .cases import Case, public_calls, read_cases
from .declarations import Check, Composition, Graded, Misconception, Student

SHARED = "_shared"  # what several notebooks use; a folder starting with "_" is no notebook
PROPERTIES = "properties.py"  # in _shared/: shipped as public_checks/properties.py


@dataclass
class GraderSuite:
    checks: dict[str, list[Check]]  # function -> its checks, in declaration order
    misconceptions: dict[str, list[Misconception]]  # function -> catalogue entries (with carried-over ones)
    notebooks: dict[str, list[str]]  # notebook id -> graded functions, in order
    path: Path
    compositions: dict[str, Composition] = field(default_factory=dict)  # function -> how it builds on another
    domains: dict[str, Any] = field(default_factory=dict)  # function -> contract domain (@domain)
    package: str = ""  # the name graders/<assignment>/ is imported under
    graded: dict[str, Graded] = field(default_factory=dict)  # function -> its classes of input, form clause
    students: list[Student] = field(default_factory=list)  # the self-validation's, in declaration order
    folders: dict[str, Path] = field(default_factory=dict)  # function -> its notebook's folder
    _public: dict[tuple[int, str], frozenset[str]] = field(default_factory=dict, repr=False)

    def module(self, name: str) -> Any:
        """A module of the grader package, e.g. ``suite.module("03_rotation.strategies")``."""
        return importlib.import_module(f"{self.package}.{name}")

    @property
    def properties(self) -> Path:
        """The public properties, shipped verbatim with the release."""
        return self.path / SHARED / PROPERTIES

    def cases(self, function: str) -> tuple[Case, ...]:
        """The example cases of ``function``: ``<notebook>/cases/<function>.json``."""
        return read_cases(self.folders[function] / "cases" / f"{function}.json")

    @property
    def alternatives(self) -> dict[str, list[Callable[..., Any]]]:
        """Correct implementations by function (``@alternative``), in declaration order."""
        found: dict[str, list[Callable[..., Any]]] = {}
        for s in self.students:
            if s.kind == "alternative":
                found.setdefault(s.function, []).append(s.implementation)
        return found

    @property
    def careful(self) -> list[tuple[str, Callable[..., Any], str]]:
        """(function, implementation, misconception id): one misconception in careful code (``@careful``)."""
        return [
            (s.function, s.implementation, s.misconception or "")
            for s in self.students
            if s.kind == "careful"
        ]

    @property
    def flawed(self) -> list[tuple[str, Callable[..., Any], set[str]]]:
        """(function, implementation, clauses it loses): one realistic slip each (``@flawed``)."""
        return [(s.function, s.implementation, set(s.loses)) for s in self.students if s.kind == "flawed"]

    def functions_for(self, notebook_id: str, nb: Any | None = None) -> list[str]:
        """Graded functions of a notebook; by its test cells when the file name is unknown."""
        if notebook_id in self.notebooks:
            return self.notebooks[notebook_id]
        if nb is not None:
            ids = [gid[len("test_") :] for gid in test_cell_ids(nb) if gid.startswith("test_")]
            return [fn for fn in ids if fn in self.checks]
        return []

    @staticmethod
    def clauses(reference: Any, function: str) -> dict[str, Clause]:
        """The function's clauses with their points, as the source notebook states them."""
        return dict(getattr(reference, "contracts", {}).get(function, {}))

    def public_calls(self, reference: Any, function: str) -> frozenset[str]:
        """The calls a student can see in the public checks (the public cases and their twins)."""
        key = (id(reference), function)
        if key not in self._public:
            self._public[key] = public_calls(self, reference, function)
        return self._public[key]

    def max_score(self, reference: Any, function: str) -> float:
        return round(sum(c.points for c in self.clauses(reference, function).values()), 6)


_SUITES: dict[str, GraderSuite] = {}


def notebook_folders(graders_dir: Path) -> list[Path]:
    """The notebook folders of a suite, by name: every folder not starting with ``_`` or ``.``."""
    return sorted(
        p
        for p in Path(graders_dir).iterdir()
        if p.is_dir() and not p.name.startswith(("_", ".")) and any(p.glob("*.py"))
    )


def _declared(module: Any) -> list[Any]:
    """What ``module`` itself declares at module level (not what it imports from elsewhere), once
    each (``frequencies = freq_exp`` declares nothing new)."""
    found: dict[int, Any] = {}
    for obj in vars(module).values():
        if isinstance(obj, Graded) or getattr(obj, "__module__", None) == module.__name__:
            found.setdefault(id(obj), obj)
    return list(found.values())


def load_suite(graders_dir: Path) -> GraderSuite:
    """Import ``graders/<assignment>/`` (trusted instructor code) once per process, by the rule above."""
    graders_dir = Path(graders_dir).resolve()
    if str(graders_dir) in _SUITES:
        return _SUITES[str(graders_dir)]
    pkg_name = "_pe_graders_" + hashlib.sha1(str(graders_dir).encode()).hexdigest()[:10]
    spec = importlib.util.spec_from_file_location(
        pkg_name, graders_dir / "__init__.py", submodule_search_locations=[str(graders_dir)]
    )
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no grader package at {graders_dir}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[pkg_name] = package
    spec.loader.exec_module(package)

    suite = GraderSuite({}, {}, {}, graders_dir, package=pkg_name)
    for folder in notebook_folders(graders_dir):
        for path in sorted(folder.glob("*.py")):
            name = folder.name if path.stem == "__init__" else f"{folder.name}.{path.stem}"
            _register(suite, importlib.import_module(f"{pkg_name}.{name}"), folder)
    for found in suite.checks.values():
        found.sort(key=lambda c: (c.run.__code__.co_filename, c.run.__code__.co_firstlineno))
    for fn in suite.checks:  # a function without a declaration: no narrower classes, no form clause
        suite.graded.setdefault(fn, Graded(fn))
    for comp in suite.compositions.values():  # a misconception carried into the functions built on it
        upstream = suite.misconceptions.get(comp.upstream, [])
        carried = [comp.carry(m) for m in upstream if m.carried_from is None]
        suite.misconceptions.setdefault(comp.function, []).extend(carried)
    _SUITES[str(graders_dir)] = suite
    return suite


def _register(suite: GraderSuite, module: Any, folder: Path) -> None:
    """Everything ``module`` (of the notebook folder ``folder``) declares, into ``suite``."""
    for obj in _declared(module):
        if isinstance(obj, Graded):
            suite.graded[obj.function] = obj
        if isinstance(getattr(obj, "__pe_composition__", None), Composition):
            suite.compositions[obj.__pe_composition__.function] = obj.__pe_composition__
        if isinstance(getattr(obj, "__pe_check__", None), Check):
            c = obj.__pe_check__
            suite.checks.setdefault(c.function, []).append(c)
            suite.folders[c.function] = folder
            notebook = suite.notebooks.setdefault(folder.name, [])
            if c.function not in notebook:
                notebook.append(c.function)
        if isinstance(getattr(obj, "__pe_misconception__", None), Misconception):
            m = obj.__pe_misconception__
            suite.misconceptions.setdefault(m.function, []).append(m)
        if callable(getattr(obj, "__pe_domain__", None)):
            suite.domains[obj.__name__] = obj.__pe_domain__
        if isinstance(getattr(obj, "__pe_student__", None), Student):
            suite.students.append(obj.__pe_student__)

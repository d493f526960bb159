"""The public checks of a release: what a student can run before submitting.

``pe-course release`` writes ``source/<assignment>/public_checks/`` (and nbgrader copies it into
``release/``, beside the notebooks):

- the modules of :mod:`pe_course.public_checks` verbatim (the comparisons, the messages and the
  charging rule the graders use);
- ``properties.py``: ``graders/<assignment>/_shared/properties.py`` verbatim (properties that need
  no reference);
- ``<notebook>.json``: for each graded function of the notebook, its clauses with their points
  (from the notebook), the public cases of ``graders/<assignment>/<notebook>/cases/`` with the
  expected results computed
  from the reference solution and the class of input each belongs to (with its twin, see
  :mod:`pe_course.public_checks`), and the inputs of the public properties.

Only data and the two modules ship: never the reference code, never a hidden case.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from .. import public_checks
from ..engine.cases import MAX_PUBLIC_DEPTH
from ..engine.declarations import Check
from ..engine.grader import reference_outcome
from ..engine.inputs import arguments, memberships, probe_call, twin_call
from ..public_checks import outcome_to_data, same_result, show_call, to_data
from . import precision

PROPERTIES = "properties.py"


def engine_files() -> dict[str, bytes]:
    """The modules of :mod:`pe_course.public_checks`, by file name: what ships as the engine."""
    folder = Path(public_checks.__file__).parent
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.py"))}


def _case(suite: Any, reference: Any, fn: str, args: tuple, kwargs: dict, depth: int = 0) -> dict:
    """A call as public data: its arguments, the reference's outcome, and the classes of input it
    belongs to, each with its twin (the same data, one level down)."""
    func = reference[fn]
    data: dict[str, Any] = {"args": [to_data(a) for a in args]}
    if kwargs:
        data["kwargs"] = {k: to_data(v) for k, v in kwargs.items()}
    expected = reference_outcome(func, args, kwargs)
    data["expected"] = precision.stored(outcome_to_data(expected))  # no last bits of a float (see precision)
    probe = probe_call(suite.graded.get(fn), func, args, kwargs) if depth == 0 and expected.ok else None
    if probe is not None:  # the same input with other values, where the reference's result differs
        probed = reference_outcome(func, *probe)
        if probed.ok and same_result(probed.value, expected.value) is False:
            data["probe"] = {"args": [to_data(a) for a in probe[0]]}
            if probe[1]:
                data["probe"]["kwargs"] = {k: to_data(v) for k, v in probe[1].items()}
    classes = []
    for cls in memberships(suite.graded.get(fn), func, args, kwargs):
        entry: dict[str, Any] = {"clause": cls.clause, "class": cls.name}
        twin = twin_call(cls, func, args, kwargs)
        if twin is not None and depth >= MAX_PUBLIC_DEPTH:
            raise ValueError(
                f"{fn}: a public case needs more than {MAX_PUBLIC_DEPTH} twin steps ({show_call(fn, args, kwargs)}); "
                "give public cases fewer features at once"
            )
        if twin is not None:
            entry["same_expected"] = cls.same_expected
            entry["twin"] = _case(suite, reference, fn, twin[0], twin[1], depth + 1)
        classes.append(entry)
    data["classes"] = classes
    return data


def _properties(suite: Any, check: Check) -> list[dict]:
    if check.public is None:
        return []
    prop, inputs = check.public
    if Path(inspect.getsourcefile(prop) or "").resolve() != Path(suite.properties).resolve():
        raise ValueError(
            f"{check.function}/{check.name}: a public property must be defined in the graders' _shared/{PROPERTIES}"
        )
    return [
        {
            "check": check.name,
            "clause": check.clause,
            "title": check.title,
            "property": prop.__name__,
            "args": [to_data(a) for a in args],
        }
        for args in inputs
    ]


def _public_cases(suite: Any, fn: str) -> list:
    return [c for c in suite.cases(fn) if c.public]


def spec_of(suite: Any, reference: Any, fn: str) -> dict:
    """The public check of one graded function, as data."""
    graded = suite.graded.get(fn)
    comp = suite.compositions.get(fn)
    cases = []
    for case in _public_cases(suite, fn):
        if arguments(reference[fn], case.args, case.kwargs) is None:
            raise ValueError(f"{fn}: public case {case.name!r} does not fit the reference's signature")
        if not precision.covers(case.tolerance):
            raise ValueError(
                f"{fn}: public case {case.name!r} compares with {case.tolerance}, narrower than the stored "
                f"expected values allow (rtol >= {precision.CHECK_RTOL}, atol >= {precision.CHECK_ATOL})"
            )
        cases.append(
            {"name": case.name, **case.tolerance, **_case(suite, reference, fn, case.args, case.kwargs)}
        )
    return {
        "clauses": {k: {"text": c.text, "points": c.points} for k, c in suite.clauses(reference, fn).items()},
        "base": graded.base if graded else public_checks.BASE_CLAUSE,
        "form": graded.form if graded else None,
        "form_shape": (graded.form_shape if graded.form else None) if graded else None,
        "raises": list(graded.raises) if graded and graded.raises else None,
        "builds_on": comp.upstream if comp else None,
        "cases": cases,
        "properties": [entry for chk in suite.checks[fn] for entry in _properties(suite, chk)],
    }


def public_files(suite: Any, reference: Any, notebooks: list[str]) -> dict[str, bytes]:
    """Every file of ``public_checks/`` by name, for the notebooks that have graded functions."""
    files = {
        **engine_files(),
        PROPERTIES: suite.properties.read_bytes(),
    }
    for notebook in notebooks:
        functions = suite.notebooks.get(notebook, [])
        if not functions:
            continue
        data = {
            "notebook": notebook,
            "about": "Kasus publik: keluaran yang diharapkan dihitung dari solusi referensi. "
            "Dijalankan oleh sel test_<fungsi> (from public_checks import check_function).",
            "functions": {fn: spec_of(suite, reference, fn) for fn in functions},
        }
        files[f"{notebook}.json"] = (readable_json(data) + "\n").encode("utf-8")
    return files


def readable_json(value: Any, indent: str = "", width: int = 110) -> str:
    """JSON a student can read: what fits on a line stays on one line (an array, a case's result)."""
    flat = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    if len(indent) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + "  "
    if isinstance(value, list):
        items = [inner + readable_json(v, inner, width) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    items = [
        f"{inner}{json.dumps(k, ensure_ascii=False)}: {readable_json(v, inner, width)}"
        for k, v in value.items()
    ]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


def files_of(folder: Path) -> dict[str, bytes]:
    """The files of a ``public_checks/`` folder as they are (caches left out)."""
    if not folder.is_dir():
        return {}
    return {
        p.name: p.read_bytes()
        for p in sorted(folder.iterdir())
        if p.is_file() and p.suffix in (".py", ".json")
    }


def rounded_as_stored(data: Any) -> bool:
    """Whether every expected value in a ``<notebook>.json`` is as :func:`precision.stored` writes it."""
    if isinstance(data, dict):
        return all(
            precision.stored(v) == v if k == "expected" else rounded_as_stored(v) for k, v in data.items()
        )
    return all(rounded_as_stored(v) for v in data) if isinstance(data, list) else True


def _current(name: str, old: bytes, new: bytes) -> bool:
    """``old`` needs no rewrite: the same, or stored values within one stored digit of ``new``'s."""
    if old == new:
        return True
    return precision.same_file(name, old, new) and rounded_as_stored(json.loads(old))


def write(folder: Path, files: dict[str, bytes]) -> None:
    """Make ``folder`` hold exactly ``files`` (stale ones removed). A file that matches already (floats
    within one stored digit, see :mod:`pe_course.build.precision`) is kept: no change on another CPU."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in set(files_of(folder)) - set(files):
        (folder / name).unlink()
    for name, data in files.items():
        path = folder / name
        if not path.is_file() or not _current(name, path.read_bytes(), data):
            path.write_bytes(data)

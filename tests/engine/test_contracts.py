"""The check ↔ contract binding, both ways (issue: fair to every honest student).

- every check names a clause of its function's contract, as the notebook states it, and every
  clause states its points (the test cell's points are their sum);
- every clause the notebook states is enforced by at least one check;
- the released notebooks carry every clause word for word;
- every input the graders give a function lies inside that contract: the calls made while grading
  the reference and every catalogued misconception (shrinking and twins included), and far more
  examples of every strategy than grading draws;
- the graders' own inputs cover the contract: every class of input a clause names, and every
  combination the graders declare (``graded(..., must_draw=...)``), is drawn beyond the public cases.
"""

from __future__ import annotations

import nbformat
import pytest
from conftest import FUNCTIONS, GRADERS, NOTEBOOKS, REPO

from pe_course.build.release import points_problems
from pe_course.course.clauses import parse_contracts
from pe_course.engine import grade_function
from pe_course.engine import grader as checks_module
from pe_course.engine.diagnosis import InProcessCaller
from pe_course.engine.inputs import arguments, call_key, memberships
from pe_course.public_checks import Clause, Outcome

RELEASE = REPO / "release" / "positional-encoding"


def test_every_check_names_a_stated_clause(suite, reference):
    for fn, checks in suite.checks.items():
        stated = reference.contracts.get(fn)
        assert stated, f"the notebook states no 'Ketentuan yang dinilai' for {fn}"
        for chk in checks:
            assert chk.clause in stated, (
                f"{fn}/{chk.name} enforces {chk.clause!r}, which the notebook does not state"
            )


def test_every_stated_clause_is_enforced(suite, reference):
    assert set(reference.contracts) == set(suite.checks), "contracts and graded functions differ"
    for fn, clauses in reference.contracts.items():
        enforced = {chk.clause for chk in suite.checks[fn]}
        assert set(clauses) == enforced, (
            f"{fn}: clauses stated but never checked: {sorted(set(clauses) - enforced)}"
        )
        assert list(clauses) == [f"K{i}" for i in range(1, len(clauses) + 1)], (
            f"{fn}: clauses numbered K1, K2, ..."
        )
        assert all(c.points > 0 for c in clauses.values()), f"{fn}: every clause states its points"
        graded = suite.graded[fn]
        named = {c.clause for c in graded.classes} | ({graded.form} if graded.form else set())
        assert named <= set(clauses), f"{fn}: input classes or form name clauses the notebook does not state"


def test_the_test_cells_points_are_the_sums_of_their_clauses():
    from conftest import REPO as repo

    assert points_problems(repo / "source" / "positional-encoding") == []


def test_points_problems_names_a_cell_whose_points_differ_from_its_clauses(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "**Ketentuan yang dinilai untuk `f`:**\n\n- **K1 (1 poin).** satu\n- **K2 (0.5 poin).** dua\n"
            ),
            nbformat.v4.new_code_cell(
                "f",
                metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "test_f", "points": 2}},
            ),
        ]
    )
    nbformat.write(nb, tmp_path / "x.ipynb")
    assert points_problems(tmp_path) == [
        "x.ipynb test_f: nbgrader points 2, but its clauses add up to 1.5; set the cell's points to the sum"
    ]


def test_released_notebooks_state_every_clause(reference):
    released = {}
    for name in NOTEBOOKS:
        released.update(parse_contracts(nbformat.read(RELEASE / f"{name}.ipynb", as_version=4)))
    assert released == reference.contracts


def test_contract_parser_reads_a_continued_clause_and_stops_at_the_list_end():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "Teks.\n\n**Ketentuan yang dinilai untuk `f`:**\n\n- **K1.** satu\n  lanjutan\n- **K2.** dua\n\nbukan klausul\n"
                "- **K3.** juga bukan"
            )
        ]
    )
    assert parse_contracts(nb) == {
        "f": {"K1": Clause("K1", "satu lanjutan", 0.0), "K2": Clause("K2", "dua", 0.0)}
    }
    nb.cells[0].source = nb.cells[0].source.replace("**K1.**", "**K1 (1.25 poin).**")
    assert parse_contracts(nb)["f"]["K1"] == Clause("K1", "satu lanjutan", 1.25)


class ContractCaller(InProcessCaller):
    """Calls trusted functions, and records every input that lies outside the stated contract."""

    def __init__(self, functions, domains) -> None:
        super().__init__(functions)
        self.domains = domains
        self.outside: list[str] = []
        self.calls = 0

    def call(self, fn, *args, **kwargs) -> Outcome:
        self.calls += 1
        reason = self.domains[fn](*args, **kwargs)
        if reason:
            self.outside.append(f"{fn}: {reason}")
        return super().call(fn, *args, **kwargs)


def test_every_function_has_a_domain(suite):
    assert set(suite.domains) == set(suite.checks)


@pytest.mark.parametrize(
    "fn",
    sorted(FUNCTIONS),
)
def test_graders_call_only_inside_the_contract(fn, suite, reference):
    implementations = [reference[fn]] + [m.implementation for m in suite.misconceptions.get(fn, [])]
    for implementation in implementations:
        caller = ContractCaller({**reference, fn: implementation}, suite.domains)
        grade_function(fn, suite, reference, caller, deadline=float("inf"))
        assert caller.calls > 0
        assert not caller.outside, (
            f"{fn} ({implementation.__name__}) called outside its contract: {caller.outside[:3]}"
        )


class RecordingCaller(ContractCaller):
    """A ContractCaller that also keeps every call it was given."""

    def __init__(self, functions, domains) -> None:
        super().__init__(functions, domains)
        self.log: list[tuple[str, tuple, dict]] = []

    def call(self, fn, *args, **kwargs) -> Outcome:
        self.log.append((fn, args, kwargs))
        return super().call(fn, *args, **kwargs)


@pytest.fixture(scope="module")
def drawn_far(suite, reference):
    """Every call made while grading the reference with 300 examples of every strategy (far more
    than grading draws), by function: what the strategies can give a function."""
    original = checks_module.draw
    calls = {}
    try:
        checks_module.draw = lambda factory, n: original(factory, 300)
        for fn in FUNCTIONS:
            caller = RecordingCaller(dict(reference), suite.domains)
            grade_function(fn, suite, reference, caller, deadline=float("inf"))
            assert not caller.outside, (
                f"{fn}: 300 examples per strategy left the contract: {caller.outside[:3]}"
            )
            calls[fn] = caller.log
    finally:
        checks_module.draw = original
    return calls


def test_strategies_draw_only_inside_the_contract(drawn_far):
    assert set(drawn_far) == set(FUNCTIONS)


@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_the_graders_own_inputs_cover_every_class_and_combination_of_the_contract(fn, suite, reference):
    """Beyond the public cases (a student can see those), the graders draw every class of input a
    clause names and every combination they declare (e.g. odd d_model with length = 0)."""
    caller = RecordingCaller(dict(reference), suite.domains)
    grade_function(fn, suite, reference, caller, deadline=float("inf"))
    public = suite.public_calls(reference, fn)
    graded = suite.graded[fn]
    own = [(a, k) for f, a, k in caller.log if f == fn and call_key(fn, a, k) not in public]
    seen = {c.name for a, k in own for c in memberships(graded, reference[fn], a, k)}
    missing = [c.name for c in graded.classes if c.name not in seen]
    assert not missing, f"{fn}: the graders never draw (beyond the public cases): {missing}"
    for name, wanted in graded.must_draw:
        assert any(
            (named := arguments(reference[fn], a, k)) is not None and wanted(**named) for a, k in own
        ), f"{fn}: the graders never draw {name!r}"


def test_upstream_functions_are_graded_before_the_functions_built_on_them(suite):
    """The stand-in answers with correct values only while a function built on it runs: by then the
    upstream function's own grading in that worker is over."""
    assert set(suite.compositions) == {"positional_encoding", "shift_encoding", "rope_scores"}
    for comp in suite.compositions.values():
        notebook = next(nb for nb, fns in suite.notebooks.items() if comp.function in fns)
        order = suite.notebooks[notebook]
        assert comp.upstream in order and order.index(comp.upstream) < order.index(comp.function)


@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_every_twin_is_inside_the_contract_and_a_same_result_twin_gets_the_same_result(
    fn, suite, reference, drawn_far
):
    """A twin is the nearest input without one feature: it must itself be a valid input, and where the
    graders say the reference gives it the same result, it does (or the charging rule would misjudge)."""
    from pe_course.engine.inputs import twin_call
    from pe_course.public_checks import close_enough

    func, graded, checked = reference[fn], suite.graded[fn], 0
    for f, args, kwargs in drawn_far[fn]:
        if f != fn:
            continue
        for cls in memberships(graded, func, args, kwargs):
            twin = twin_call(cls, func, args, kwargs)
            if twin is None:
                continue
            checked += 1
            assert suite.domains[fn](*twin[0], **twin[1]) is None, (
                f"{fn} {cls.name}: twin outside the contract"
            )
            if cls.same_expected:
                a, b = (
                    checks_module.reference_outcome(func, args, kwargs),
                    checks_module.reference_outcome(func, *twin),
                )
                assert a.kind == b.kind and (not a.ok or close_enough(a.value, b.value)), (
                    f"{fn} {cls.name}: the twin's result differs although declared the same"
                )
    assert checked or not graded.classes, f"{fn}: no twin was ever made"


def test_public_properties_call_only_ordinary_inputs_or_their_own_clauses(suite, reference):
    """The public check charges any failure inside a property to the property's clause, as the graders
    do for a property that does not hold: so a public property calls only ordinary inputs (K1's) or
    inputs of its own clause's classes."""
    from pe_course.build.public_files import spec_of
    from pe_course.public_checks import from_data

    class Recorder:
        def __init__(self, fn):
            self.fn, self.calls = fn, []

        def call(self, fn, *args, **kwargs):
            assert fn == self.fn
            self.calls.append((args, kwargs))
            return reference[fn](*args, **kwargs)

        array = staticmethod(checks_module.as_array)
        close = staticmethod(checks_module.assert_close)

        @staticmethod
        def fail(message, input=""):
            raise AssertionError(message)

    properties = suite.module("_shared.properties")
    for fn in FUNCTIONS:
        for entry in spec_of(suite, reference, fn)["properties"]:
            recorder = Recorder(fn)
            getattr(properties, entry["property"])(recorder, *(from_data(a) for a in entry["args"]))
            assert recorder.calls, f"{fn} {entry['property']}: the property calls nothing"
            for args, kwargs in recorder.calls:
                found = memberships(suite.graded[fn], reference[fn], args, kwargs)
                assert not found or found[0].clause == entry["clause"], (
                    f"{fn} {entry['property']} ({entry['clause']}): calls an input of {[c.name for c in found]}"
                )


DRAW_DIGEST = """
import hashlib, json, sys
from pathlib import Path
if sys.argv[1] == "many":
    import pe_course.cli, pe_course.cli.demo_class, pe_course.report.render  # other local modules loaded first
from pe_course.engine.drawing import draw
from pe_course.public_checks import to_data
from pe_course.engine.discovery import load_suite
suite = load_suite(Path(sys.argv[2]))
drawn = [
    to_data(list(draw(getattr(suite.module(f"{notebook}.strategies"), name), 30)))
    for notebook, name in (("01_embedding", "embed_inputs"), ("02_sinusoidal", "pe_inputs"), ("03_rotation", "rope_inputs"))
]
print(hashlib.sha1(json.dumps(drawn).encode()).hexdigest())
"""


def test_the_graders_draw_the_same_inputs_whatever_else_is_loaded():
    """A re-grade, a Dask worker installed from a wheel and a local round draw the same inputs:
    Hypothesis's habit of drawing constants from the loaded "local" modules is switched off."""
    import subprocess
    import sys

    digests = {
        subprocess.run(
            [sys.executable, "-c", DRAW_DIGEST, which, str(GRADERS)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for which in ("few", "many")
    }
    assert len(digests) == 1, digests


TOY = REPO / "tests" / "fixtures" / "course"  # the second assignment of tests/e2e/test_second_assignment.py


def test_the_fixture_assignments_graders_keep_its_contract_both_ways():
    """The toy assignment's suite is bound to its notebook as positional-encoding's is: every check names
    a stated clause, every clause is enforced, and the graders call only inside the stated domains."""
    from pe_course.course.notebooks import load_reference
    from pe_course.engine.discovery import load_suite

    suite = load_suite(TOY / "graders" / "toy-attention")
    reference = load_reference(TOY / "source" / "toy-attention")
    assert set(reference.contracts) == set(suite.checks) == set(suite.domains)
    for fn, clauses in reference.contracts.items():
        assert {chk.clause for chk in suite.checks[fn]} == set(clauses), fn
        for implementation in [reference[fn], *(m.implementation for m in suite.misconceptions[fn])]:
            caller = ContractCaller({**reference, fn: implementation}, suite.domains)
            grade_function(fn, suite, reference, caller, deadline=float("inf"))
            assert caller.calls > 0 and not caller.outside, (fn, implementation.__name__, caller.outside[:3])

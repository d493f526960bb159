"""The graders validate themselves: reference full marks, stubs zero, misconceptions caught and
diagnosed, genuinely different correct implementations full marks (in-process, and through the
sandbox for whole notebooks), and credit per clause (issue 19): every catalogued misconception and
every flawed student is charged exactly its clauses, by the graders and by the public check a
student runs before submitting; a hard-coder of the public cases earns nothing."""

from __future__ import annotations

import inspect
import re

import pytest
from conftest import FUNCTIONS, GRADERS, REPO, reference_nb

from pe_course.build.degenerate import degenerate_students
from pe_course.build.self_validation import hard_coder
from pe_course.course.datafiles import PUBLIC_DIR
from pe_course.engine import grade_function, grade_notebook
from pe_course.engine.diagnosis import InProcessCaller
from pe_course.engine.discovery import load_suite
from pe_course.public_checks import preview_points, run_public
from pe_course.sandbox import Sandbox

PUBLIC = REPO / "source" / "positional-encoding" / PUBLIC_DIR

CATALOGUE_IDS = {
    "embed": {"pos-indexed-by-ids", "concat-not-add", "missing-position", "no-block-size-check"},
    "one_hot": {"one-hot-transposed"},
    "embed_backward": {"add-at-missing", "pos-indexed-by-ids"},
    "frequencies": {"freq-per-column", "inverted-frequency"},
    "positional_encoding": {
        "sin-cos-swapped",
        "freq-per-column",
        "halves-not-interleaved",
        "inverted-frequency",
    },
    "rotation_matrix": {"rotation-transposed"},
    "apply_rope": {"rope-rotate-half", "rope-wrong-direction", "freq-per-column", "overwritten-pair"},
    # carried over from the function they build on (graders declare it with @builds_on), and their own
    "shift_encoding": {"rotation-transposed", "overwritten-pair"},
    "rope_scores": {"rope-rotate-half", "rope-wrong-direction", "freq-per-column", "overwritten-pair"},
    "position_similarity": {"dot-not-cosine"},
    "offset_similarity": {"sin-not-cos"},
    "self_attention": {"no-sqrt-scaling", "softmax-wrong-axis", "unstable-softmax"},
}


def grade(fn, suite, reference, implementation):
    caller = InProcessCaller({**reference, fn: implementation})
    return grade_function(fn, suite, reference, caller, deadline=float("inf"))


def lost(cell) -> set[str]:
    return {c.clause for c in cell.clauses if not c.passed}


def lost_publicly(fn, implementation) -> set[str]:
    """The clauses the public check (as the student's test cell runs it) finds broken."""
    verdicts, _, _ = run_public(fn, implementation, PUBLIC)
    return {v.clause.id for v in verdicts if not v.passed}


def test_every_graded_function_has_checks_and_the_catalogue_is_complete(suite):
    assert sorted(suite.checks) == sorted(FUNCTIONS)
    assert {fn: {m.id for m in ms} for fn, ms in suite.misconceptions.items()} == CATALOGUE_IDS
    for entries in suite.misconceptions.values():
        for m in entries:
            assert m.description and m.hint, f"{m.id} needs a docstring and a hint"


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_reference_scores_full_marks(fn, suite, reference):
    cell = grade(fn, suite, reference, reference[fn])
    assert cell.score == cell.max_score, [c.message for c in cell.clauses if not c.passed]
    assert cell.status == "ok" and cell.misconceptions == []
    assert lost_publicly(fn, reference[fn]) == set()


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_stub_scores_zero(fn, suite, reference):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    cell = grade(fn, suite, reference, stub)
    assert cell.score == 0 and cell.status == "error"
    assert all("belum ditulis" in c.message for c in cell.clauses)
    assert lost_publicly(fn, stub) == lost(cell) == {c.clause for c in cell.clauses}


SUITE = load_suite(GRADERS)
ALTERNATIVES = SUITE.alternatives  # @alternative, by function
COMPOUND = SUITE.careful  # @careful: (function, implementation, misconception id)
# realistic one-slip students, @flawed: (function, implementation, clauses it must lose)
FLAWED = SUITE.flawed
CATALOGUE = [(fn, m.id, i) for fn, ms in sorted(SUITE.misconceptions.items()) for i, m in enumerate(ms)]


@pytest.mark.parametrize(
    ("fn", "mid", "index"), CATALOGUE, ids=[f"{fn}-{mid}-{i}" for fn, mid, i in CATALOGUE]
)
def test_misconception_is_charged_once_diagnosed_and_seen_before_submitting(fn, mid, index, suite, reference):
    m = suite.misconceptions[fn][index]
    cell = grade(fn, suite, reference, m.implementation)
    assert len(lost(cell)) == 1, f"one mistake, one clause: {lost(cell)}"
    assert [d["id"] for d in cell.misconceptions] == [mid], (
        "diagnosed exactly the misconception, nothing else"
    )
    failed = [c for c in cell.clauses if not c.passed]
    assert all(c.message and c.input and c.text for c in failed), (
        "every lost point names the failing input and the clause"
    )
    assert lost_publicly(fn, m.implementation) == lost(cell), "the public check fails on the same clause"


@pytest.mark.parametrize(
    ("fn", "implementation"),
    [(fn, impl) for fn, impls in ALTERNATIVES.items() for impl in impls],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_alternative_correct_implementation_scores_full_marks(fn, implementation, suite, reference):
    assert len(ALTERNATIVES[fn]) >= 2
    cell = grade(fn, suite, reference, implementation)
    assert cell.score == cell.max_score, [f"{c.clause}: {c.message}" for c in cell.clauses if not c.passed]
    assert cell.misconceptions == []
    assert lost_publicly(fn, implementation) == set()


@pytest.mark.parametrize(("fn", "implementation", "mid"), COMPOUND, ids=lambda v: getattr(v, "__name__", v))
def test_misconception_in_otherwise_careful_code_is_diagnosed(fn, implementation, mid, suite, reference):
    cell = grade(fn, suite, reference, implementation)
    assert len(lost(cell)) == 1 and lost_publicly(fn, implementation) == lost(cell)
    assert [d["id"] for d in cell.misconceptions] == [mid]


@pytest.mark.parametrize(
    ("fn", "implementation", "clauses"), FLAWED, ids=lambda v: getattr(v, "__name__", None)
)
def test_a_flawed_student_loses_exactly_the_clauses_broken(fn, implementation, clauses, suite, reference):
    """Lists instead of arrays, an off-by-one at block_size, a missing base, a wrong sign of k, an early
    return for k = 0 or length = 0, a bincount without minlength, ...: each costs its clause's points
    and nothing else, and the public check finds the same clause before submitting."""
    cell = grade(fn, suite, reference, implementation)
    assert lost(cell) == set(clauses), [(c.clause, c.message) for c in cell.clauses if not c.passed]
    points = {c.clause: c.max_points for c in cell.clauses}
    assert cell.score == pytest.approx(cell.max_score - sum(points[k] for k in clauses))
    assert lost_publicly(fn, implementation) == set(clauses)


def test_every_issue_named_slip_is_among_the_flawed_students():
    names = {impl.__name__ for _, impl, _ in FLAWED}
    assert len(FLAWED) >= 8 and len(names) == len(FLAWED)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_code_that_raises_everywhere_earns_nothing(fn, suite, reference):
    """Raising the error a clause names, on every input, meets no clause (not even "raise ValueError when ...")."""

    def always(*args, **kwargs):
        raise ValueError("selalu")

    cell = grade(fn, suite, reference, always)
    assert cell.score == 0, [c.clause for c in cell.clauses if c.passed]
    assert lost_publicly(fn, always) == {c.clause for c in cell.clauses}


DEGENERATE = sorted(degenerate_students(lambda: None))


@pytest.mark.parametrize("kind", DEGENERATE)
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_code_that_does_nothing_useful_earns_nothing(fn, kind, suite, reference):
    """Issue 29: ``None``, a constant or zeros of the right shape, its own argument, seeded or fresh
    noise, raising for everything, validating and then returning zeros or raising NameError — 0 points
    from the graders and from the public check, and the feedback says why a clause with nothing
    charged to it is not met."""
    implementation = degenerate_students(reference[fn])[kind]
    cell = grade(fn, suite, reference, implementation)
    assert cell.score == 0, [(c.clause, c.message) for c in cell.clauses if c.passed]
    assert all(c.message for c in cell.clauses), "every lost clause says why"
    verdicts, _, _ = run_public(fn, implementation, PUBLIC)
    assert sum(preview_points(v) for v in verdicts) == 0, [v.clause.id for v in verdicts if v.passed]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_hard_coding_the_public_cases_earns_nothing(fn, suite, reference):
    """The graders stay ahead of the public cases: every clause has inputs of its own."""
    implementation = hard_coder(fn, PUBLIC)
    assert lost_publicly(fn, implementation) <= {"K1"}, "the hard-coder passes (almost) every public case"
    cell = grade(fn, suite, reference, implementation)
    assert cell.score == 0, [c.clause for c in cell.clauses if c.passed]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_class_of_input_has_a_public_case(fn, suite, reference):
    """Every class of input a clause names, and the ordinary inputs of K1, have at least one public case,
    with its expected result: a student can see every kind of failure before submitting."""
    from pe_course.build.public_files import spec_of

    spec = spec_of(suite, reference, fn)
    firsts = {case["classes"][0]["class"] if case["classes"] else "" for case in spec["cases"]}
    named = {c.name for c in suite.graded[fn].classes}
    everywhere = {entry["class"] for case in spec["cases"] for entry in case["classes"]}
    assert "" in firsts or spec["properties"], f"{fn}: no ordinary public case"
    assert named <= everywhere, f"{fn}: no public case of {sorted(named - everywhere)}"
    assert all(
        c
        in {e["clause"] for case in spec["cases"] for e in case["classes"]}
        | {"K1"}
        | ({spec["form"]} if spec["form"] else set())
        | {p["clause"] for p in spec["properties"]}
        for c in spec["clauses"]
    ), f"{fn}: a clause without a public case"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["01_embedding", "03_rotation", "04_similarity"])
def test_alternatives_through_the_sandbox(notebook, suite, reference):
    """Each notebook's functions replaced by an alternative (its alternatives.py pasted at the end,
    without the graders' ``@alternative``) — full marks."""
    import nbformat

    alternatives = suite.module(f"{notebook}.alternatives")

    nb = reference_nb(notebook)
    code = inspect.getsource(alternatives).replace("from pe_course.engine import alternative\n", "")
    code = "\n".join(line for line in code.splitlines() if not line.startswith("@alternative("))
    code += "\n" + "\n".join(f"{fn} = {ALTERNATIVES[fn][-1].__name__}" for fn in suite.notebooks[notebook])
    nb.cells.append(nbformat.v4.new_code_cell(code))
    result = grade_notebook(nb, notebook, suite, reference, Sandbox())
    assert result.score == result.max_score, [
        (c.grade_id, k.clause, k.message) for c in result.cells for k in c.clauses if not k.passed
    ]


@pytest.mark.xdist_group("built-clone")
def test_build_selfcheck_passes(built_clone):
    """`pe-course build` on a fresh clone: self-validation passes, and its table has a reference row of
    full marks for every notebook (the build is the ``built_clone`` fixture's, shared with the instructor
    guide's round in tests/test_docs.py)."""
    _, build = built_clone
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "Self-validation passed; released to release/positional-encoding" in build.stdout
    rows = re.findall(r"^│ reference +│ (\S+) +│ (\d+)/(\d+) +│$", build.stdout, flags=re.M)
    assert {notebook for notebook, _, _ in rows} == {
        p.stem for p in (REPO / "source" / "positional-encoding").glob("*.ipynb")
    }
    assert all(got == full for _, got, full in rows), rows


def test_self_validation_refuses_graders_that_keep_points_by_default(monkeypatch, tmp_path):
    """The rule issue 29 removed, put back: a clause with nothing charged keeps its points (every
    clause counted as shown, the real-answer gate always open, a failure charged elsewhere never
    doubted). Self-validation must then refuse the
    toy assignment's graders because degenerate students earn points, by the graders and by the
    public check; with the rule as it is, the same students earn nothing."""
    from pe_course.build.self_validation import SelfCheck, _students, _write_public_checks
    from pe_course.course import Course
    from pe_course.course.notebooks import load_reference
    from pe_course.engine import ledger as grader_module
    from pe_course.public_checks import charging
    from pe_course.public_checks import runner as public_runner
    from pe_course.public_checks.evidence import REAL
    from pe_course.public_checks.verdicts import Gate

    toy = Course(REPO / "tests" / "fixtures" / "course", "toy-attention")
    toy_suite, toy_reference = load_suite(toy.graders), load_reference(toy.source)
    public = _write_public_checks(tmp_path, toy, toy_suite, toy_reference)

    def degenerate_problems() -> list[str]:
        report = SelfCheck()
        _students(report, toy_suite, toy_reference, [], public)
        return [p for p in report.problems if p.startswith("degenerate")]

    assert degenerate_problems() == []
    strict = grader_module.verdicts

    def by_default(clauses, failures, unproven=None, *, shown, gate, function=""):
        clauses = list(clauses)
        return strict(
            clauses, failures, None, shown={c.id for c in clauses}, gate=Gate(True), function=function
        )

    monkeypatch.setattr(charging, "look_at", lambda answer, strict=True: (REAL, ""))  # no answer doubted
    monkeypatch.setattr(grader_module, "verdicts", by_default)
    monkeypatch.setattr(public_runner, "verdicts", by_default)
    problems = degenerate_problems()
    for function in ("attention_scores", "self_attention"):
        assert any(p.startswith(f"degenerate {function}/") for p in problems), problems
    assert all(" earns " in p and "kept without evidence" in p for p in problems)

"""The rule that points are earned by real answers (issue 29), on small functions: what a real answer
is, the gate, a clause kept by a failure charged elsewhere only with real answers there, and results
of every numeric kind compared as they are (pe_course.public_checks.evidence and .charging)."""

from __future__ import annotations

import numpy as np
import pytest

from pe_course.public_checks import (
    SAME_VALUES,
    UNCLEAR,
    Answer,
    Clause,
    Failure,
    Gate,
    Outcome,
    assert_close,
    close_enough,
    first_real,
    look_at,
    relation,
    same_result,
    verdicts,
)
from pe_course.public_checks.evidence import REAL, UNDECIDED, UNREAL
from pe_course.sandbox.inside.codec import decode_untrusted, dumps, encode, loads_untrusted


def double(x):
    return np.asarray(x, dtype=float) * 2


def answer(student, x, probe_x=None, expected=None):
    """The student's answer to ``double(x)``, with the probe ``double(probe_x)``."""
    expected = double(x) if expected is None else expected
    value = student(x)
    probe = None
    if probe_x is not None:

        def probe():
            return Outcome("value", student(probe_x)), f"f({probe_x})"

    return Answer(
        f"f({x})",
        Outcome("value", value),
        expected,
        same_result(value, expected) is True,
        (x,),
        {},
        probe,
        lambda: Outcome("value", student(x)),
    )


X = np.array([1.0, 2.0, 3.0])
PROBE = X * 2 + 1


@pytest.mark.parametrize(
    ("student", "verdict"),
    [
        (double, REAL),
        (lambda x: np.asarray(x) * 3, REAL),  # wrong, but computed from the input
        (lambda x: None, UNREAL),
        (lambda x: np.zeros(3), UNREAL),
        (lambda x: np.full(3, 0.5), UNREAL),
        (lambda x: x, UNREAL),  # its own argument
        (lambda x: np.random.default_rng(0).standard_normal(3), UNREAL),  # the same for every input
        (lambda x: np.random.default_rng().standard_normal(3), UNREAL),  # another each time
    ],
)
def test_a_real_answer_is_computed_from_the_input(student, verdict):
    assert look_at(answer(student, X, PROBE))[0] == verdict


def test_a_right_answer_a_constant_could_give_proves_nothing():
    """Right where the expected result is all zeros, or is the argument itself: not evidence of a
    working function (zeros, and echo, are right there too)."""
    zero = np.zeros(3)
    assert look_at(answer(lambda x: np.zeros(3), zero, expected=zero))[0] == UNDECIDED
    same = answer(lambda x: x, X, PROBE, expected=X)
    assert look_at(same)[0] == UNDECIDED


def test_the_gate_says_why_no_answer_is_real():
    found, why, where = first_real([answer(lambda x: np.zeros(3), X, PROBE)])
    assert not found and "satu nilai yang sama" in why and where == f"f({X})"
    found, why, _ = first_real([answer(lambda x: np.ones(3) * 7, X), answer(double, PROBE)])
    assert found and why == ""
    assert first_real([], "`f` belum ditulis.")[1] == "`f` belum ditulis"


def test_a_failure_elsewhere_keeps_a_clause_only_with_real_answers_there():
    clauses = [Clause("K1", "rumus", 1.0), Clause("K2", "list", 0.5), Clause("K3", "kosong", 0.5)]
    charged = Failure("K1", "salah", input="f([1])", origin="K2")
    fake = Failure("K1", "salah", input="f([2])", origin="K3", unreal="keluarannya tidak berubah")
    out = verdicts(clauses, [charged, fake], shown={"K3"}, gate=Gate(True), function="f")
    passed = {v.clause.id for v in out if v.passed}
    assert passed == {"K2"}, "K2: the same mistake as K1's, with real answers; K3: not real there"
    k3 = next(v for v in out if v.clause.id == "K3")
    assert "bukan jawaban nyata" in k3.failure.message and "f([2])" in k3.failure.message


def test_no_clause_is_kept_by_default():
    """A clause nothing was charged to, with no input of its own answered right, is not met; without
    a real answer anywhere no clause is, and the reason is given once."""
    clauses = [Clause("K1", "rumus", 1.0), Clause("K2", "list", 0.5), Clause("K3", "kosong", 0.5)]
    out = verdicts(clauses, [], shown={"K1"}, gate=Gate(True), function="f")
    assert [v.passed for v in out] == [True, False, False]
    out = verdicts(
        clauses, [], shown={"K1", "K2", "K3"}, gate=Gate(False, "keluarannya None", "f(1)"), function="f"
    )
    assert not any(v.passed for v in out)
    messages = [v.failure.message for v in out]
    assert "keluarannya None" in messages[0] and all("alasannya di K1" in m for m in messages[1:])


def test_results_of_every_numeric_kind_are_compared_as_they_are():
    """bool read as 0/1, complex accepted only with zero imaginary parts (and said so), two results of
    the student's compared with each other whatever their kind: one mistake, one relation."""
    assert close_enough(np.array([True, False]), np.array([1.0, 0.0]))
    assert close_enough(np.array([1 + 0j, 2 + 0j]), np.array([1.0, 2.0]))
    with pytest.raises(Exception, match="kompleks"):
        assert_close(np.array([1 + 1j]), np.array([1.0]), "keluaran")
    booleans = Outcome("value", np.array([[True, False]]))
    assert relation(booleans, Outcome("value", np.array([[True, False]])), same_expected=True) == SAME_VALUES
    complexes = Outcome("value", np.array([1 + 2j]))
    assert relation(complexes, Outcome("value", np.array([1 + 2j])), same_expected=True) == SAME_VALUES
    assert relation(Outcome("value", None), Outcome("value", None), same_expected=False) == UNCLEAR


def test_complex_results_cross_the_sandbox_boundary_as_numbers():
    for value in (np.array([1 + 2j, 3 - 1j]), 2.5 - 1j, (np.array([True]), np.array([1j]))):
        back = decode_untrusted(loads_untrusted(dumps(encode(value))))
        assert same_result(back, value)


def test_an_error_message_from_student_code_reads_as_written_in_the_feedback():
    """NumPy's messages quote names ('add'): the entity html.escape writes must reach the page as a
    quote, not as ``&\\#x27;`` (a Markdown escape inside the entity broke it)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from pe_course.public_checks.messages import plain, untrusted

    raw = "Cannot cast ufunc 'add' output <b>x</b> (a) #1 `c` a_b"
    page = markdown2html_mistune("Error: " + untrusted(raw))
    assert "Cannot cast ufunc 'add' output &lt;b&gt;x&lt;/b&gt; (a) #1 `c` a_b" in page
    assert "<b>" not in page and "&amp;#" not in page
    assert plain(untrusted(raw)) == raw


# The kinds of pe_course.build.degenerate, and the words of every notebook's grading cell that state them.
STATED_DEGENERATE = {
    "none": "`None`",
    "zeros": "nilai tetap (misalnya array nol berbentuk benar)",
    "constant": "nilai tetap",
    "validated_zeros": "nilai tetap",
    "echo": "argumennya sendiri",
    "seeded_noise": "angka acak",
    "fresh_noise": "angka acak",
    "raises": "melempar error untuk setiap input",
    "validated_then_name_error": "melempar error untuk setiap input",
}


def _grading_cells():
    import nbformat
    from conftest import REPO

    paths = sorted((REPO / "source").glob("*/*.ipynb"))
    paths += sorted((REPO / "tests" / "fixtures" / "course" / "source").glob("*/*.ipynb"))
    assert len(paths) >= 5
    for path in paths:
        cell = nbformat.read(path, as_version=4).cells[0]
        assert "**Cara penilaian.**" in cell.source, path
        yield path.name, " ".join(cell.source.split())


def test_the_grading_cell_states_the_evidence_rule_the_graders_apply():
    """Every kind of degenerate code self-validation refuses to reward is named in every notebook, and
    the comparison of numeric kinds behaves as the notebooks say."""
    from pe_course.build.degenerate import degenerate_students
    from pe_course.public_checks import Outcome, judge

    assert set(degenerate_students(lambda x: x)) == set(STATED_DEGENERATE)
    for name, text in _grading_cells():
        assert "Poin didapat dari bukti, tidak pernah dianggap ada." in text, name
        assert "setidaknya satu input ketentuan itu dijawab benar" in text, name
        for phrase in set(STATED_DEGENERATE.values()):
            assert phrase in text, (name, phrase)
        for phrase in (
            "`int` dan `float` setara",
            "`bool` dibaca sebagai 0 dan 1",
            "bilangan kompleks diterima bila bagian imajinernya nol",
            "Keluaran yang bukan bilangan (misalnya string atau `None`) salah",
        ):
            assert phrase in text, (name, phrase)

    def verdict(obtained):
        return judge("f", (), {}, Outcome("value", obtained), Outcome("value", np.array([1.0, 0.0])))

    assert verdict(np.array([True, False])) == []
    assert verdict(np.array([1, 0])) == []
    assert verdict(np.array([1 + 0j, 0j])) == []
    (complex_failure,) = verdict(np.array([1 + 1e-3j, 0j]))
    assert "kompleks" in str(complex_failure)
    assert verdict(np.array(["1", "0"])) != []

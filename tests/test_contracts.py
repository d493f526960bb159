"""The check ↔ contract binding, both ways (issue: fair to every honest student).

- every check names a clause of its function's contract, as the notebook states it;
- every clause the notebook states is enforced by at least one check;
- the released notebooks carry every clause word for word;
- every input the graders give a function lies inside that contract: the calls made while grading
  the reference and every catalogued misconception (shrinking included), and far more examples of
  every strategy than grading draws.
"""

from __future__ import annotations

import inspect

import nbformat
import numpy as np
import pytest
from conftest import FUNCTIONS, NOTEBOOKS, REPO

from pe_course.checks import draw
from pe_course.contracts import parse_contracts
from pe_course.diagnosis import InProcessCaller
from pe_course.sandbox.client import Outcome
from pe_course.score import _grade_function

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
    assert parse_contracts(nb) == {"f": {"K1": "satu lanjutan", "K2": "dua"}}


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
        _grade_function(fn, suite, reference, caller, deadline=float("inf"))
        assert caller.calls > 0
        assert not caller.outside, (
            f"{fn} ({implementation.__name__}) called outside its contract: {caller.outside[:3]}"
        )


# How each strategy's examples are passed to the graded function, as the checks do.
def _calls(s):
    return {
        s.embed_inputs: lambda ex: ("embed", ex, {}),
        s.embed_too_long_inputs: lambda ex: ("embed", ex, {}),
        s.one_hot_inputs: lambda ex: ("one_hot", ex, {}),
        s.embed_backward_inputs: lambda ex: ("embed_backward", ex, {}),
        s.frequencies_inputs: lambda ex: ("frequencies", (ex[0],), s.base_kwargs(ex[1])),
        s.pe_inputs: lambda ex: ("positional_encoding", ex[:2], s.base_kwargs(ex[2])),
        s.rotation_angles: lambda ex: ("rotation_matrix", (ex,), {}),
        s.angle_pairs: lambda ex: ("rotation_matrix", (ex[1],), {}),
        s.shift_inputs: lambda ex: ("shift_encoding", ex[:2], s.base_kwargs(ex[2])),
        s.pe_shift_inputs: lambda ex: ("shift_encoding", (np.zeros(ex[0]), ex[4]), s.base_kwargs(ex[1])),
        s.rope_inputs: lambda ex: ("apply_rope", ex[:1] if ex[1] is None else ex[:2], s.base_kwargs(ex[2])),
        s.rope_relative_inputs: lambda ex: ("apply_rope", (ex[0], ex[2] + ex[4]), s.base_kwargs(ex[5])),
        s.rope_scores_inputs: lambda ex: ("rope_scores", ex[:2], s.base_kwargs(ex[2])),
        s.tiled_rope_inputs: lambda ex: (
            "rope_scores",
            (np.tile(ex[0], (ex[2], 1)), np.tile(ex[1], (ex[3], 1))),
            s.base_kwargs(ex[4]),
        ),
        s.similarity_inputs: lambda ex: ("position_similarity", ex, {}),
        s.offset_inputs: lambda ex: ("offset_similarity", ex[:2], s.base_kwargs(ex[2])),
        s.attention_inputs: lambda ex: ("self_attention", (ex,), {}),
        s.attention_permutation_inputs: lambda ex: ("self_attention", (ex[0][ex[1]],), {}),
    }


def test_strategies_draw_only_inside_the_contract(suite):
    s = suite.module("strategies")
    calls = _calls(s)
    public = {
        obj
        for name, obj in vars(s).items()
        if inspect.isfunction(obj)
        and obj.__module__ == s.__name__
        and name.endswith(("inputs", "angles", "pairs"))
    }
    assert public <= set(calls), (
        f"strategies without a contract mapping here: {sorted(f.__name__ for f in public - set(calls))}"
    )
    for factory, to_call in calls.items():
        for example in draw(factory, 300):
            fn, args, kwargs = to_call(example)
            reason = suite.domains[fn](*args, **kwargs)
            assert reason is None, (
                f"{factory.__name__} drew {example!r}: outside the contract of {fn} ({reason})"
            )


def test_upstream_functions_are_graded_before_the_functions_built_on_them(suite):
    """The stand-in answers with correct values only while a function built on it runs: by then the
    upstream function's own grading in that worker is over."""
    assert set(suite.compositions) == {"positional_encoding", "shift_encoding", "rope_scores"}
    for comp in suite.compositions.values():
        notebook = next(nb for nb, fns in suite.notebooks.items() if comp.function in fns)
        order = suite.notebooks[notebook]
        assert comp.upstream in order and order.index(comp.upstream) < order.index(comp.function)

"""Checks a student can run before submitting, and the rule that charges every lost point once.

This package is the one code path for what a student reads about a check: the comparisons and
their Indonesian messages, and the rule that decides which requirement (clause ``K1``, ``K2``, ...
of a function's "Ketentuan yang dinilai") a failure is charged to. The hidden graders
(``pe_course.engine``) use it while grading; a copy of it ships with every release as the folder
``public_checks/``, beside the notebooks, where each ``test_<function>`` cell runs it in
the student's kernel::

    from public_checks import check_function
    check_function("embed", embed)

It must stay importable with the standard library and NumPy only.

**The charging rule.** A clause is the unit of credit: it earns its points when nothing is charged
to it, and loses all of them (once) otherwise.

- A result of the wrong form (a list where the notebook promises an ``np.ndarray``, a tuple of
  another length, a shape the form clause states) is charged to the function's *form* clause, and
  its values are still compared; a function without one has its values compared whatever their form.
- Every input is *ordinary* or belongs to the narrower classes of input the clauses name (a Python
  list, ``T = 0``, ``T = block_size``, ``base`` given, ``k`` negative, ...), the first in the
  graders' order being *its* class. A wrong result or an error on an ordinary input is charged to the
  base clause (K1). On an input of a narrower class it is charged to that class's clause, unless it
  is the same mistake as on the class's *twin*, the nearest input without that feature (the same
  ids as an array, a table one row longer, the default ``base``): then it is charged where the
  twin's failure is. It is the same mistake when the function's results on the input and its twin
  relate as the reference's do (equal where the reference gives equal results, different where it
  gives different ones, both wrong), or when both raise the same error and the narrower clause has
  other inputs the function gets right.
- A property the notebook states (norms kept, one-hot times table equals lookup, ...) that does not
  hold is charged to the clause the check names; a call inside it that gave no value is charged as
  above.
"""

from __future__ import annotations

from .charging import (
    BASE_CLAUSE,
    DIFFERENT,
    MAX_TWIN_DEPTH,
    SAME_VALUES,
    TWIN_PASSED,
    UNCLEAR,
    Failure,
    Membership,
    Pending,
    RaiseWatch,
    Step,
    evidence_for,
    relation,
    resolve,
    settle,
    trace,
    why,
)
from .compare import (
    as_array,
    assert_close,
    close_enough,
    form_problem,
    judge,
    same_values,
)
from .data import (
    from_data,
    outcome_from_data,
    outcome_to_data,
    to_data,
)
from .evidence import (
    Answer,
    first_real,
    look_at,
    numeric_parts,
    same_result,
)
from .messages import (
    CheckFailed,
    Outcome,
    brief,
    call_outcome,
    describe_failure,
    no_value,
    number_text,
    obtained_text,
    plain,
    show_call,
    untrusted,
)
from .runner import (
    HERE,
    PublicChecker,
    PublicCheckFailed,
    check_function,
    run_public,
    unproven_form,
)
from .verdicts import (
    Clause,
    ClauseVerdict,
    Gate,
    clause_lines,
    preview_points,
    verdict_lines,
    verdicts,
)

__all__ = [
    "Answer",
    "BASE_CLAUSE",
    "Gate",
    "Pending",
    "first_real",
    "look_at",
    "numeric_parts",
    "same_result",
    "CheckFailed",
    "Clause",
    "ClauseVerdict",
    "DIFFERENT",
    "Failure",
    "HERE",
    "MAX_TWIN_DEPTH",
    "Membership",
    "Outcome",
    "PublicCheckFailed",
    "PublicChecker",
    "RaiseWatch",
    "SAME_VALUES",
    "Step",
    "TWIN_PASSED",
    "UNCLEAR",
    "as_array",
    "assert_close",
    "brief",
    "call_outcome",
    "check_function",
    "clause_lines",
    "close_enough",
    "describe_failure",
    "evidence_for",
    "form_problem",
    "from_data",
    "judge",
    "no_value",
    "number_text",
    "obtained_text",
    "outcome_from_data",
    "outcome_to_data",
    "plain",
    "preview_points",
    "relation",
    "resolve",
    "run_public",
    "same_values",
    "settle",
    "show_call",
    "to_data",
    "trace",
    "unproven_form",
    "untrusted",
    "verdict_lines",
    "verdicts",
    "why",
]

"""The engine: the one place a score is decided.

- :mod:`.discovery` finds a suite's graders, one folder per notebook (``graders/<assignment>/<notebook>/``);
- :mod:`.declarations` is what those files declare with (checks, classes of input, misconceptions,
  the self-validation's students); :mod:`.cases` their example cases and the public ones' calls;
  :mod:`.inputs` and :mod:`.drawing` the inputs; :mod:`.answers` the answers looked at again;
- :mod:`.grade` grades a notebook (:func:`grade_notebook`) and one function (:func:`grade_function`),
  and gives every clause its points (:func:`award`);
- :mod:`.grader` is what a check receives, :mod:`.ledger` what it found until every check has run;
- :mod:`.diagnosis` names the misconceptions behind a lost point.

Which clause a failure is charged to is the rule the students run too, shipped in
:mod:`pe_course.public_checks`; the engine never imports nbgrader, the grading round or the release.

A grader module imports its whole vocabulary from here::

    from pe_course.engine import Grader, InputClass, case_runner, check, graded
"""

from ..public_checks import CheckFailed, as_array, assert_close, brief
from .cases import case_runner
from .declarations import (
    Composition,
    InputClass,
    Misconception,
    Student,
    alternative,
    builds_on,
    careful,
    check,
    flawed,
    graded,
    misconception,
    other_values,
)
from .grade import award, grade_function, grade_notebook
from .grader import Grader

__all__ = [
    "CheckFailed",
    "Composition",
    "Grader",
    "InputClass",
    "Misconception",
    "Student",
    "alternative",
    "as_array",
    "assert_close",
    "award",
    "brief",
    "builds_on",
    "careful",
    "case_runner",
    "check",
    "flawed",
    "grade_function",
    "grade_notebook",
    "graded",
    "misconception",
    "other_values",
]

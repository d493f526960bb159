"""The strategies' building blocks several notebooks use: bounded, NaN-free, derandomized by
``pe_course.engine.drawing.draw``. All sizes are small (grading must stay fast) and all floats are finite
and moderate, so that a correct implementation can never fail on rounding.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Values away from 0: a mistake shows on every input (an all-zero grad_h hides a mistake in grad_pos,
# and a failure's twin must not pass by accident; see pe_course.public_checks).
FLOATS = st.one_of(
    st.floats(-10, -0.25, allow_nan=False, allow_infinity=False, width=64),
    st.floats(0.25, 10, allow_nan=False, allow_infinity=False, width=64),
)


def matrix(rows: int, cols: int, elements=FLOATS):
    return hnp.arrays(np.float64, (rows, cols), elements=elements)


even_dims = st.integers(1, 16).map(lambda n: 2 * n)


def base_kwargs(base: float) -> dict:
    """Pass ``base`` only when it is not the default, so both call styles are exercised."""
    return {} if base == 10000.0 else {"base": base}


bases = st.sampled_from([10000.0, 10000.0, 100.0, 500.0, 1e5, 100])  # an int base too


@st.composite
def rows_with_even_dim(draw, max_rows: int = 8, elements=FLOATS):
    """x of shape (T, d) with even d."""
    return draw(matrix(draw(st.integers(1, max_rows)), draw(even_dims), elements))

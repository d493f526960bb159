"""Bounded, NaN-free hypothesis strategies for 02_sinusoidal's generated inputs (derandomized by
``pe_course.engine.drawing.draw``; the building blocks several notebooks use: ``_shared/strategies.py``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from .._shared.strategies import even_dims

# 02_sinusoidal: the default base (its own clause's ordinary input) about half of the time, else a
# positive base away from it (K2 of frequencies and positional_encoding), fractional ones included.
sinusoidal_bases = st.one_of(
    st.just(10000.0),
    st.sampled_from([100.0, 500.0, 1e5, 2.5, 50, 500]),  # int bases too: "any positive number"
    st.floats(1.5, 5e4, allow_nan=False, allow_infinity=False).map(lambda b: round(b, 2)),
)


@st.composite
def pe_inputs(draw):
    """(length, d_model, base) for positional_encoding, every valid class: length >= 1 or length = 0,
    d_model even and positive (2 included), base the default or given; their combinations too."""
    length = draw(st.sampled_from([0, 1, 2, 3, 5, 8, 13, 21, 40]))  # 16 draws: 0 twice, base 7 times
    return length, draw(even_dims), draw(sinusoidal_bases)


@st.composite
def frequencies_inputs(draw):
    """(d_model, base) with even positive d_model (odd d_model is outside the contract of frequencies);
    base the default (10000.0, about half of the examples) or another positive number."""
    return draw(st.one_of(st.just(2), st.integers(1, 32).map(lambda n: 2 * n))), draw(sinusoidal_bases)


@st.composite
def pe_invalid_inputs(draw):
    """(length, d_model, base) on which positional_encoding must raise ValueError: d_model odd, zero or
    negative (with length = 0 as often as not), or length negative."""
    kind = draw(st.sampled_from(["odd", "not-positive", "negative-length"]))
    length = draw(st.one_of(st.just(0), st.integers(1, 12)))
    d_model = draw(even_dims)
    if kind == "odd":
        d_model = draw(st.integers(0, 16).map(lambda n: 2 * n + 1))
    elif kind == "not-positive":
        d_model = draw(st.integers(-8, 0))
    else:
        length = draw(st.integers(-12, -1))
        d_model = draw(st.one_of(even_dims, st.integers(-3, 9)))
    return length, d_model, draw(sinusoidal_bases)

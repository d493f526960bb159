"""Checks for 02_sinusoidal: frequencies, positional_encoding."""

from __future__ import annotations

import numpy as np

from pe_course.engine import Grader, InputClass, builds_on, case_runner, check, graded

from .._shared import properties as p
from .._shared.strategies import base_kwargs
from . import strategies as s

run_cases = case_runner(__file__)  # cases/<function>.json beside this file
DEFAULT_BASE = 10000.0


def _base_given(base) -> bool:
    return base != DEFAULT_BASE


def _base_matters(d_model, length=2) -> bool:
    """Whether ``base`` can change the result. It cannot for d_model = 2 (the one frequency is
    base^0 = 1) nor for length <= 1 (position 0 only: every angle is 0): there a given base is an
    ordinary input, as the notebook's K1 says (its twin would get the same result from the reference,
    and a mistake showing there is the ordinary inputs' own)."""
    return d_model >= 4 and length >= 2


def _valid_d_model(d_model) -> bool:
    return d_model > 0 and d_model % 2 == 0


def _base_class(valid) -> InputClass:
    """K2's class: ``base`` given where it changes the result; its twin has the default base."""
    return InputClass(
        "K2",
        "base diberikan (bukan 10000)",
        lambda d_model, base, length=2: (
            _base_given(base) and valid(length, d_model) and _base_matters(d_model, length)
        ),
        twin=lambda base, **_: {"base": DEFAULT_BASE},
    )


def _base_arguments(base: float, d_model: int) -> tuple[tuple, dict]:
    """``base`` left out when it is the default, else passed positionally for some ``d_model`` and by
    keyword for the others (the notebook allows both)."""
    if not _base_given(base):
        return (), {}
    return ((base,), {}) if d_model % 4 == 2 else ((), {"base": base})


# -- frequencies (1 point) --------------------------------------------------------------------
FREQUENCIES = graded(
    "frequencies",
    _base_class(lambda length, d_model: True),
    form="K1",  # K1 promises an np.ndarray; its shape is compared with the values
    probe=lambda d_model, base: {"base": base * 2},
    must_draw={"base int": lambda d_model, base: isinstance(base, int) and d_model >= 4},
)


@check("frequencies", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def frequencies_cases(g: Grader) -> None:
    run_cases(g, "frequencies")


def _frequencies_random(g: Grader, clause: str) -> None:
    """The generated inputs of ``clause`` (one draw shared by the clauses): K2 where base is given
    and matters, K1 elsewhere."""

    def body(example) -> None:
        d_model, base = example
        if ("K2" if _base_given(base) and _base_matters(d_model) else "K1") == clause:
            args, kwargs = _base_arguments(base, d_model)
            g.expect("frequencies", d_model, *args, **kwargs)

    g.for_all(s.frequencies_inputs, 16, body)


@check(
    "frequencies",
    "acak",
    clause="K1",
    title="d_model genap acak dengan base bawaan, dibandingkan dengan solusi referensi",
)
def frequencies_random(g: Grader) -> None:
    _frequencies_random(g, "K1")


@check(
    "frequencies",
    "base-acak",
    clause="K2",
    title="d_model genap acak dengan base lain (juga pecahan), dibandingkan dengan solusi referensi",
)
def frequencies_random_base(g: Grader) -> None:
    _frequencies_random(g, "K2")


@check(
    "frequencies",
    "deret-geometri",
    clause="K1",
    title="omega_0 = 1 dan frekuensi menurun sebagai deret geometri (rasio dua frekuensi berurutan sama)",
    public=(p.frequencies_geometric, [(10,)]),
)
def frequencies_sequence(g: Grader) -> None:
    g.for_all(s.frequencies_inputs, 6, lambda ex: p.frequencies_geometric(g, ex[0]))


# -- positional_encoding (3 points) -----------------------------------------------------------
@builds_on("positional_encoding", "frequencies")
def pe_from_frequencies(frequencies, length, d_model, base=10000.0):
    """positional_encoding as the notebook suggests: sin/cos of positions times ``frequencies``."""
    if d_model <= 0 or d_model % 2 != 0 or length < 0:
        raise ValueError("di luar ketentuan")
    omega = np.asarray(frequencies(d_model, base=base), dtype=float)
    if omega.shape != (d_model // 2,):
        raise ValueError("frequencies memberi bentuk yang tidak bisa dipakai")
    angles = np.arange(length)[:, None] * omega[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


POSITIONAL_ENCODING = graded(
    "positional_encoding",
    # inputs that must raise: no twin, always K4's (length = 0 with an odd d_model included)
    InputClass(
        "K4",
        "d_model ganjil atau tidak positif",
        lambda length, d_model, base: not _valid_d_model(d_model),
    ),
    InputClass("K4", "length negatif", lambda length, d_model, base: length < 0),
    InputClass(
        "K3",
        "length = 0",
        lambda length, d_model, base: length == 0 and _valid_d_model(d_model),
        twin=lambda length, d_model, base: {"length": 1},
    ),
    _base_class(lambda length, d_model: length >= 0 and _valid_d_model(d_model)),
    raises=("K4", "ValueError"),
    probe=lambda length, d_model, base: {"base": base * 2},
    must_draw={
        "base int": lambda length, d_model, base: isinstance(base, int) and d_model >= 4 and length >= 2
    },
)


@check("positional_encoding", "kasus", clause="K1", title="Contoh dari bab dan kasus untuk setiap ketentuan")
def pe_cases(g: Grader) -> None:
    run_cases(g, "positional_encoding")


def _pe_random(g: Grader, clause: str) -> None:
    """The generated valid inputs of ``clause`` (one draw shared by the clauses): K3 for length = 0,
    K2 where base is given and matters, K1 elsewhere."""

    def body(example) -> None:
        length, d_model, base = example
        base_class = _base_given(base) and _base_matters(d_model, length)
        if ("K3" if length == 0 else "K2" if base_class else "K1") == clause:
            args, kwargs = _base_arguments(base, d_model)
            g.expect("positional_encoding", length, d_model, *args, **kwargs)

    g.for_all(s.pe_inputs, 16, body)


@check(
    "positional_encoding",
    "acak",
    clause="K1",
    title="length >= 1 dan d_model genap acak dengan base bawaan, dibandingkan dengan solusi referensi",
)
def pe_random(g: Grader) -> None:
    _pe_random(g, "K1")


@check(
    "positional_encoding",
    "base-acak",
    clause="K2",
    title="length, d_model genap dan base lain (juga pecahan) acak, dibandingkan dengan solusi referensi",
)
def pe_random_base(g: Grader) -> None:
    _pe_random(g, "K2")


@check(
    "positional_encoding",
    "length-nol",
    clause="K3",
    title="length = 0 dengan d_model genap acak (base bawaan atau lain) menghasilkan bentuk (0, d_model)",
)
def pe_length_zero(g: Grader) -> None:
    _pe_random(g, "K3")


@check(
    "positional_encoding",
    "nilai-error",
    clause="K4",
    title="ValueError tepat untuk d_model ganjil atau tidak positif (juga dengan length = 0) dan length negatif",
)
def pe_errors(g: Grader) -> None:
    g.for_all(
        s.pe_invalid_inputs,
        6,
        lambda ex: g.expect_raises("positional_encoding", "ValueError", ex[0], ex[1], **base_kwargs(ex[2])),
    )
    g.expect_no_error("positional_encoding", "ValueError", 5, 6)


@check(
    "positional_encoding",
    "sin-cos-berpasangan",
    clause="K1",
    title="Baris posisi 0 = [0, 1, 0, 1, ...] dan tiap pasangan (sin, cos) memenuhi sin² + cos² = 1",
    public=(p.pe_pairs_on_unit_circle, [(6, 8)]),
)
def pe_unit_pairs(g: Grader) -> None:
    p.pe_pairs_on_unit_circle(g, 50, 32)


@check(
    "positional_encoding",
    "hanya-selisih-posisi",
    clause="K1",
    title="PE(p)·PE(q) hanya bergantung pada p - q: matriks Gram PE·PEᵀ konstan sepanjang setiap diagonal",
    public=(p.pe_dot_depends_on_offset, [(8, 6)]),
)
def pe_relative(g: Grader) -> None:
    for length, d_model in [(30, 16), (12, 4)]:
        p.pe_dot_depends_on_offset(g, length, d_model)

"""Checks for 02_sinusoidal: frequencies, positional_encoding."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, as_array, assert_close, builds_on, check

from . import strategies as s
from .cases import cases

NOTEBOOK = "02_sinusoidal"


# -- frequencies (1 point) --------------------------------------------------------------------
@check(
    "frequencies",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: d_model = 8 dan d_model = 4 dengan base = 100",
)
def frequencies_chapter(g: Grader) -> None:
    for case in cases("frequencies"):
        g.expect("frequencies", *case.args)


@check(
    "frequencies",
    "acak",
    clause="K2",
    title="d_model genap dan base acak dibandingkan dengan solusi referensi",
)
def frequencies_random(g: Grader) -> None:
    g.for_all(s.frequencies_inputs, 20, lambda ex: g.expect("frequencies", ex[0], **s.base_kwargs(ex[1])))


@check(
    "frequencies",
    "deret-geometri",
    clause="K1",
    title="omega_0 = 1 dan tiap frekuensi berikutnya dikali base^(-2/d_model)",
)
def frequencies_geometric(g: Grader) -> None:
    def body(example) -> None:
        d_model, base = example
        shown = f"frequencies({d_model}, base={base:g})"
        w = as_array(g.call("frequencies", d_model, base=base), (d_model // 2,), f"keluaran `{shown}`")
        if not np.isclose(w[0], 1.0, rtol=1e-9, atol=0):
            raise CheckFailed(
                f"Frekuensi pertama dari `{shown}` harus 1 (base^0), didapat {w[0]:.6g}.",
                input=shown,
                expected="1",
                obtained=f"{w[0]:.6g}",
            )
        if d_model > 2:
            assert_close(
                w[1:] / w[:-1],
                np.full(d_model // 2 - 1, base ** (-2.0 / d_model)),
                "rasio dua frekuensi berurutan (harus base^(-2/d_model))",
                inputs=shown,
            )

    g.for_all(s.frequencies_inputs, 15, body)


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


@check(
    "positional_encoding",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: tabel 6 posisi (d_model = 8) dan PE(pos=10, i=0) untuk d_model = 32",
)
def pe_chapter(g: Grader) -> None:
    for case in cases("positional_encoding"):
        g.expect("positional_encoding", *case.args)


@check(
    "positional_encoding",
    "acak",
    clause="K1",
    title="length, d_model genap dan base acak dibandingkan dengan solusi referensi",
)
def pe_random(g: Grader) -> None:
    g.for_all(
        s.pe_inputs, 20, lambda ex: g.expect("positional_encoding", ex[0], ex[1], **s.base_kwargs(ex[2]))
    )


@check(
    "positional_encoding",
    "tepi",
    clause="K2",
    title="Kasus tepi: length = 0, length = 1, d_model = 2",
)
def pe_edges(g: Grader) -> None:
    g.expect("positional_encoding", 0, 8)
    g.expect("positional_encoding", 1, 6)
    g.expect("positional_encoding", 9, 2)


@check(
    "positional_encoding",
    "nilai-error",
    clause="K3",
    title="ValueError untuk d_model ganjil atau tidak positif dan untuk length negatif",
)
def pe_errors(g: Grader) -> None:
    for args in [(6, 7), (6, 0), (-1, 8), (5, -2), (5, 3), (-3, 4), (4, 1)]:
        g.expect_raises("positional_encoding", "ValueError", *args)


@check(
    "positional_encoding",
    "hanya-selisih-posisi",
    clause="K1",
    title="PE(p)·PE(q) hanya bergantung pada p - q: matriks Gram = Σ_i cos(omega_i (p - q))",
)
def pe_relative(g: Grader) -> None:
    for length, d_model, base in [(30, 16, 10000.0), (25, 10, 100.0), (12, 4, 10000.0)]:
        shown = f"positional_encoding({length}, {d_model}, base={base:g})"
        pe = as_array(
            g.call("positional_encoding", length, d_model, base=base),
            (length, d_model),
            f"keluaran `{shown}`",
        )
        gram = pe @ pe.T
        if not np.allclose(gram[1:, 1:], gram[:-1, :-1], rtol=1e-6, atol=1e-6):
            raise CheckFailed(
                f"Untuk {shown}, PE(p)·PE(q) tidak hanya bergantung pada p - q: "
                "PE(p+1)·PE(q+1) berbeda dari PE(p)·PE(q). Periksa frekuensi tiap pasangan kolom.",
                input=shown,
            )
        p = np.arange(length)
        assert_close(
            gram,
            g.ref("offset_similarity", p[:, None] - p[None, :], d_model, base),
            "matriks Gram PE(p)·PE(q) (harus Σ_i cos(omega_i (p - q)))",
            atol=1e-6,
            inputs=shown,
        )


@check(
    "positional_encoding",
    "sin-cos-berpasangan",
    clause="K1",
    title="Tiap pasangan (sin, cos) memenuhi sin² + cos² = 1 dan semua nilai di [-1, 1]",
)
def pe_unit_pairs(g: Grader) -> None:
    shown = "positional_encoding(200, 64)"
    pe = as_array(g.call("positional_encoding", 200, 64), (200, 64), f"keluaran `{shown}`")
    if np.any(np.abs(pe) > 1 + 1e-12):
        raise CheckFailed(
            f"Nilai PE harus berada di [-1, 1] (sinus dan kosinus), tetapi keluaran {shown} "
            f"memuat {float(np.abs(pe).max()):.4g}.",
            input=shown,
        )
    assert_close(
        pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2,
        np.ones((200, 32)),
        "PE[:, 2i]² + PE[:, 2i+1]² (kolom genap sin dan kolom ganjil cos dengan frekuensi yang sama)",
        inputs=shown,
    )

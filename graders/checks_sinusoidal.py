"""Checks for 02_sinusoidal: frequencies, positional_encoding."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, assert_close, check, draw, require_shape

from . import strategies as s
from .cases import cases

NOTEBOOK = "02_sinusoidal"


# -- frequencies (1 point) --------------------------------------------------------------------
@check("frequencies", "contoh-bab", points=0.25,
       title="Contoh dari bab: d_model = 8 dan d_model = 4 dengan base = 100")
def frequencies_chapter(g: Grader) -> None:
    for case in cases("frequencies"):
        g.expect("frequencies", *case.args, public=case.public)


@check("frequencies", "acak", points=0.5, title="d_model genap dan base acak dibandingkan dengan solusi referensi")
def frequencies_random(g: Grader) -> None:
    for d_model, base in draw(s.frequencies_inputs, 20):
        g.expect("frequencies", d_model, base=base)


@check("frequencies", "deret-geometri", points=0.25,
       title="omega_0 = 1 dan tiap frekuensi berikutnya dikali base^(-2/d_model)")
def frequencies_geometric(g: Grader) -> None:
    for d_model, base in draw(s.frequencies_inputs, 15):
        what = f"keluaran `frequencies({d_model}, base={base:g})`"
        w = require_shape(g.call("frequencies", d_model, base=base), (d_model // 2,), what)
        if not np.isclose(w[0], 1.0, rtol=1e-9, atol=0):
            raise CheckFailed(f"Frekuensi pertama {what} harus 1 (base^0), didapat {w[0]:.6g}.")
        if d_model > 2:
            assert_close(w[1:] / w[:-1], np.full(d_model // 2 - 1, base ** (-2.0 / d_model)),
                         f"rasio dua frekuensi berurutan pada {what} (harus base^(-2/d_model))")


# -- positional_encoding (3 points) -----------------------------------------------------------
@check("positional_encoding", "contoh-bab", points=0.75,
       title="Contoh dari bab: tabel 6 posisi (d_model = 8) dan PE(pos=10, i=0) untuk d_model = 32")
def pe_chapter(g: Grader) -> None:
    for case in cases("positional_encoding"):
        g.expect("positional_encoding", *case.args, public=case.public)


@check("positional_encoding", "acak", points=0.75,
       title="length, d_model genap dan base acak dibandingkan dengan solusi referensi")
def pe_random(g: Grader) -> None:
    for length, d_model, base in draw(s.pe_inputs, 20):
        g.expect("positional_encoding", length, d_model, base=base)


@check("positional_encoding", "tepi", points=0.25, title="Kasus tepi: length = 0, length = 1, d_model = 2")
def pe_edges(g: Grader) -> None:
    out = g.call("positional_encoding", 0, 8, public=True)
    assert_close(out, np.zeros((0, 8)), "keluaran `positional_encoding` untuk length = 0", inputs="(0, 8)")
    out = g.call("positional_encoding", 1, 6)
    assert_close(out, np.array([[0.0, 1.0] * 3]), "keluaran `positional_encoding(1, 6)` (posisi 0: sin 0 = 0, cos 0 = 1)")
    g.expect("positional_encoding", 9, 2, what="keluaran `positional_encoding` untuk d_model = 2 (satu pasangan)")


@check("positional_encoding", "nilai-error", points=0.5,
       title="ValueError untuk d_model ganjil atau tidak positif dan untuk length negatif")
def pe_errors(g: Grader) -> None:
    for args in [(6, 7), (6, 0), (-1, 8)]:
        g.expect_raises("positional_encoding", "ValueError", *args, public=True)
    for args in [(5, -2), (5, 3), (-3, 4), (4, 1)]:
        g.expect_raises("positional_encoding", "ValueError", *args)


@check("positional_encoding", "hanya-selisih-posisi", points=0.5,
       title="PE(p)·PE(q) hanya bergantung pada p - q: matriks Gram = Σ_i cos(omega_i (p - q))")
def pe_relative(g: Grader) -> None:
    for length, d_model, base in [(30, 16, 10000.0), (25, 10, 100.0), (12, 4, 10000.0)]:
        what = f"keluaran `positional_encoding({length}, {d_model}, base={base:g})`"
        pe = require_shape(g.call("positional_encoding", length, d_model, base=base), (length, d_model), what)
        gram = pe @ pe.T
        if not np.allclose(gram[1:, 1:], gram[:-1, :-1], rtol=1e-6, atol=1e-6):
            raise CheckFailed(f"Untuk {what}, PE(p)·PE(q) tidak hanya bergantung pada p - q: "
                              "PE(p+1)·PE(q+1) berbeda dari PE(p)·PE(q). Periksa frekuensi tiap pasangan kolom.")
        p = np.arange(length)
        assert_close(gram, g.ref("offset_similarity", p[:, None] - p[None, :], d_model, base),
                     f"matriks Gram PE(p)·PE(q) dari {what} (harus Σ_i cos(omega_i (p - q)))", atol=1e-6)


@check("positional_encoding", "sin-cos-berpasangan", points=0.25,
       title="Tiap pasangan (sin, cos) memenuhi sin² + cos² = 1 dan semua nilai di [-1, 1]")
def pe_unit_pairs(g: Grader) -> None:
    pe = require_shape(g.call("positional_encoding", 200, 64), (200, 64), "keluaran `positional_encoding(200, 64)`")
    if np.any(np.abs(pe) > 1 + 1e-12):
        raise CheckFailed("Nilai PE harus berada di [-1, 1] (sinus dan kosinus), tetapi ada yang di luar rentang.")
    assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, np.ones((200, 32)),
                 "PE[:, 2i]² + PE[:, 2i+1]² (kolom genap sin dan kolom ganjil cos dengan frekuensi yang sama)")

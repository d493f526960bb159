"""Checks for 04_similarity: position_similarity, offset_similarity, self_attention."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, as_array, assert_close, brief, check

from . import strategies as s
from .cases import cases

NOTEBOOK = "04_similarity"


# -- position_similarity (2 points) -----------------------------------------------------------
@check(
    "position_similarity",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: pe = [[1, 0], [0, 1], [1, 1]] dengan pos = 0 dan pos = 2, baris diskalakan",
)
def similarity_chapter(g: Grader) -> None:
    for case in cases("position_similarity"):
        g.expect("position_similarity", *case.args)


@check(
    "position_similarity",
    "acak",
    clause="K2",
    title="Tabel apa pun (bukan hanya PE) dan pos acak dibandingkan dengan solusi referensi",
)
def similarity_random(g: Grader) -> None:
    g.for_all(s.similarity_inputs, 20, lambda ex: g.expect("position_similarity", *ex))


@check(
    "position_similarity",
    "diri-sendiri-dan-rentang",
    clause="K1",
    title="sim[pos] = 1, semua nilai di [-1, 1], dan sim(p, q) = sim(q, p)",
)
def similarity_properties(g: Grader) -> None:
    def body(example) -> None:
        pe, pos = example
        length = pe.shape[0]
        shown = f"position_similarity({brief(pe)}, {pos})"
        sim = as_array(g.call("position_similarity", pe, pos), (length,), f"keluaran `{shown}`")
        assert_close(
            sim[pos], 1.0, f"elemen ke-{pos} (kemiripan posisi dengan dirinya sendiri)", inputs=shown
        )
        if np.any(sim > 1 + 1e-9) or np.any(sim < -1 - 1e-9):
            raise CheckFailed(
                f"Ada nilai keluaran {shown} di luar [-1, 1]: bagi perkalian titik dengan norma "
                "baris acuan dan norma setiap baris.",
                input=shown,
            )
        other = (pos + 1) % length
        sim_other = as_array(
            g.call("position_similarity", pe, other),
            (length,),
            f"keluaran `position_similarity` untuk pos = {other}",
        )
        assert_close(
            sim_other[pos],
            float(sim[other]),
            f"sim({other}, {pos}) (harus sama dengan sim({pos}, {other}))",
            inputs=shown,
        )

    g.for_all(s.similarity_inputs, 15, body)


@check(
    "position_similarity",
    "tabel-pe-sinusoidal",
    clause="K1",
    title="Untuk tabel PE sinusoidal: sim(p, j) = Σ_i cos(omega_i (j - p)) / (d_model / 2)",
)
def similarity_sinusoidal(g: Grader) -> None:
    for length, d_model, base, pos in [(50, 32, 10000.0, 10), (30, 12, 100.0, 7), (20, 6, 10000.0, 19)]:
        pe = g.ref("positional_encoding", length, d_model, base)
        what = f"position_similarity(PE, {pos}) untuk tabel PE ({length}, {d_model}), base = {base:g}"
        sim = as_array(g.call("position_similarity", pe, pos), (length,), f"keluaran `{what}`")
        expected = g.ref("offset_similarity", np.arange(length) - pos, d_model, base) / (d_model / 2)
        assert_close(sim, expected, "keluaran", atol=1e-7, inputs=what)


# -- offset_similarity (2 points) -------------------------------------------------------------
def _is_array_offset(offset) -> bool:
    return np.ndim(offset) > 0


@check(
    "offset_similarity",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: offset 0 (d_model = 8), offset 1 (d_model = 2), base = 100, offset array",
)
def offset_chapter(g: Grader) -> None:
    chapter = cases("offset_similarity")
    for case in [c for c in chapter if _is_array_offset(c.args[0])]:
        g.expect("offset_similarity", *case.args, atol=1e-6)
    for case in [c for c in chapter if not _is_array_offset(c.args[0])]:
        g.expect("offset_similarity", *case.args, atol=1e-6)


@check(
    "offset_similarity",
    "acak",
    clause="K1",
    title="Offset skalar, array 1-D dan 2-D, d_model dan base acak dibandingkan dengan referensi",
)
def offset_random(g: Grader) -> None:
    g.for_all(
        s.offset_inputs,
        20,
        lambda ex: g.expect("offset_similarity", ex[0], ex[1], atol=1e-6, **s.base_kwargs(ex[2])),
    )


@check(
    "offset_similarity",
    "bentuk-array",
    clause="K3",
    title="Offset array (1-D, 2-D) menghasilkan array berbentuk sama; f(-k) = f(k)",
)
def offset_shapes(g: Grader) -> None:
    offsets = np.arange(-6, 6).reshape(3, 4)
    shown = "offset_similarity(np.arange(-6, 6).reshape(3, 4), 16, base=500.0)"
    table = as_array(g.call("offset_similarity", offsets, 16, base=500.0), (3, 4), f"keluaran `{shown}`")
    singles = as_array(
        g.call("offset_similarity", offsets.ravel(), 16, base=500.0),
        (12,),
        "keluaran `offset_similarity` untuk offset yang sama sebagai array 1-D (12,)",
    )
    assert_close(
        table.ravel(),
        singles,
        "keluaran dibanding offset yang sama sebagai array 1-D",
        atol=1e-6,
        inputs=shown,
    )
    ks = np.arange(0, 40, 3)
    shown = "offset_similarity(np.arange(0, 40, 3), 16) dan offset_similarity(-np.arange(0, 40, 3), 16)"
    forward = as_array(g.call("offset_similarity", ks, 16), ks.shape, "keluaran `offset_similarity(k, 16)`")
    backward = g.call("offset_similarity", -ks, 16)
    assert_close(
        backward,
        forward,
        "offset_similarity(-k, 16) (harus sama dengan offset_similarity(k, 16))",
        atol=1e-6,
        inputs=shown,
    )


@check(
    "offset_similarity",
    "skalar-float",
    clause="K2",
    title="Offset skalar (int atau float, boleh negatif) menghasilkan float Python",
)
def offset_scalar(g: Grader) -> None:
    for offset in (0, 5, -2.5):
        shown = f"offset_similarity({offset!r}, 8)"
        value = g.call("offset_similarity", offset, 8)
        if not isinstance(value, float):
            kind = (
                f"np.ndarray berbentuk {value.shape}"
                if isinstance(value, np.ndarray)
                else type(value).__name__
            )
            raise CheckFailed(
                f"`{shown}`: offset skalar harus menghasilkan float Python, "
                f"tetapi didapat {kind}. Ubah hasil berdimensi 0 dengan float(...).",
                input=shown,
                expected="float",
                obtained=kind,
            )
        assert_close(value, g.ref("offset_similarity", offset, 8), "keluaran", atol=1e-6, inputs=shown)


@check(
    "offset_similarity",
    "titik-pe",
    clause="K1",
    title="Sama dengan PE(p)·PE(p + k) dari tabel PE sinusoidal, untuk p berapa pun",
)
def offset_matches_dot(g: Grader) -> None:
    tables = [(120, 16, 10000.0), (60, 10, 100.0)]
    for length, d_model, base in tables:
        pe = g.ref("positional_encoding", length, d_model, base)
        p = np.arange(length)
        shown = f"offset_similarity(p - q untuk p, q < {length}, {d_model}, base={base:g})"
        gram = as_array(
            g.call("offset_similarity", p[:, None] - p[None, :], d_model, **s.base_kwargs(base)),
            (length, length),
            f"keluaran `{shown}`",
        )
        assert_close(gram, pe @ pe.T, "keluaran dibanding matriks Gram PE(p)·PE(q)", atol=1e-6, inputs=shown)
    for length, d_model, base in tables:
        pe = g.ref("positional_encoding", length, d_model, base)
        for k in (1, 5, 7, length // 2 - 1):
            shown = f"offset_similarity({k}, {d_model}, base={base:g})"
            value = g.call("offset_similarity", k, d_model, **s.base_kwargs(base))
            for p in (0, 7, length - 1 - k):
                assert_close(
                    value,
                    float(pe[p] @ pe[p + k]),
                    f"keluaran dibanding PE({p})·PE({p + k})",
                    atol=1e-6,
                    inputs=shown,
                )


# -- self_attention (3 points) ----------------------------------------------------------------
def _near_overflow_inputs() -> list[np.ndarray]:
    """Scores just below log(max float): exp of each is finite, but a row's sum of exps overflows."""
    c = np.sqrt(709.5 / np.sqrt(2.0))
    return [np.array([[c, c], [c, 0.999 * c], [0.998 * c, c]]), np.array([[c, c], [c, c]])]


@check(
    "self_attention",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: x = [[1, 0], [0, 1]] dan x berbentuk (4, 3)",
)
def attention_chapter(g: Grader) -> None:
    for case in cases("self_attention"):
        g.expect("self_attention", *case.args)


@check(
    "self_attention",
    "acak",
    clause="K1",
    title="x acak (T, d) dibandingkan dengan solusi referensi",
)
def attention_random(g: Grader) -> None:
    g.for_all(s.attention_inputs, 20, lambda x: g.expect("self_attention", x))


@check(
    "self_attention",
    "softmax-stabil",
    clause="K2",
    title="Softmax stabil: skor sekitar 709 dan x * 1000 tanpa NaN atau tak hingga",
)
def attention_stable(g: Grader) -> None:
    # First the scores whose exp is still finite but whose row sums overflow: an unstable softmax
    # returns finite but wrong rows here, so the mistake is caught (and diagnosed) before x * 1000.
    for x in _near_overflow_inputs():
        g.expect(
            "self_attention",
            x,
            what="keluaran `self_attention` untuk skor sekitar 709 (exp hampir overflow; "
            "kurangi maksimum tiap baris sebelum np.exp)",
        )
    x3 = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0], [0.0, 0.0, 2.0], [1.0, 1.0, 1.0]])
    g.expect("self_attention", x3 * 1000, what="keluaran `self_attention` untuk x * 1000")
    g.for_all(
        s.attention_inputs,
        5,
        lambda x: g.expect(
            "self_attention", x * 1000, what="keluaran `self_attention` untuk input acak dikali 1000"
        ),
    )


@check(
    "self_attention",
    "ekuivarian-permutasi",
    clause="K1",
    title="Tanpa posisi: self_attention(x[perm]) = self_attention(x)[perm]",
)
def attention_permutation(g: Grader) -> None:
    def body(example) -> None:
        x, perm = example
        shown = f"self_attention(x) dan self_attention(x[perm]) untuk x = {brief(x)}, perm = {perm.tolist()}"
        out = as_array(
            g.call("self_attention", x), x.shape, f"keluaran `self_attention(x)` untuk x {x.shape}"
        )
        out_perm = as_array(
            g.call("self_attention", x[perm]),
            x.shape,
            f"keluaran `self_attention(x[perm])` untuk x {x.shape}",
        )
        assert_close(
            out_perm,
            out[perm],
            "self_attention(x[perm]) (harus sama dengan self_attention(x)[perm]: "
            "tanpa informasi posisi, mengacak token hanya mengacak keluarannya)",
            inputs=shown,
        )

    g.for_all(s.attention_permutation_inputs, 15, body)


@check("self_attention", "tepi", clause="K1", title="Kasus tepi: satu token (T = 1) dan input nol")
def attention_edges(g: Grader) -> None:
    for x in (
        np.array([[0.3, -1.2, 2.0]]),
        np.array([[7.0]]),
        np.array([[4.0, -2.5, 1.0, 3.0]]),
        np.zeros((3, 4)),
    ):
        g.expect("self_attention", x)

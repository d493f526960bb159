"""Checks for 03_rotation: rotation_matrix, shift_encoding, apply_rope, rope_scores."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, as_array, assert_close, brief, builds_on, check

from . import strategies as s
from .cases import cases

NOTEBOOK = "03_rotation"


# -- rotation_matrix (1 point) ----------------------------------------------------------------
@check(
    "rotation_matrix",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: theta = 0.3, pi/2 dan sudut cek rotasi (pos = 1, k = 2)",
)
def rotation_chapter(g: Grader) -> None:
    for case in cases("rotation_matrix"):
        g.expect("rotation_matrix", *case.args)


@check(
    "rotation_matrix",
    "acak",
    clause="K1",
    title="Sudut acak dibandingkan dengan solusi referensi",
)
def rotation_random(g: Grader) -> None:
    g.for_all(s.rotation_angles, 20, lambda theta: g.expect("rotation_matrix", theta))


@check(
    "rotation_matrix",
    "ortogonal",
    clause="K1",
    title="M(theta) ortogonal: M Mᵀ = I dan det M = 1",
)
def rotation_orthogonal(g: Grader) -> None:
    def body(theta) -> None:
        shown = f"rotation_matrix({theta:.6g})"
        m = as_array(g.call("rotation_matrix", theta), (2, 2), f"keluaran `{shown}`")
        assert_close(m @ m.T, np.eye(2), "M @ M.T (harus matriks identitas)", inputs=shown)
        assert_close(np.linalg.det(m), 1.0, "determinan M", inputs=shown)

    for theta in (0.0, -1.2, 2.5, 10.0):
        body(theta)
    g.for_all(s.rotation_angles, 10, body)


@check(
    "rotation_matrix",
    "memutar-sin-cos",
    clause="K1",
    title="M(theta) memetakan (sin a, cos a) ke (sin(a + theta), cos(a + theta))",
)
def rotation_turns_pair(g: Grader) -> None:
    def body(example) -> None:
        a, theta = example
        shown = f"rotation_matrix({theta:.6g})"
        m = as_array(g.call("rotation_matrix", theta), (2, 2), f"keluaran `{shown}`")
        assert_close(
            m @ np.array([np.sin(a), np.cos(a)]),
            np.array([np.sin(a + theta), np.cos(a + theta)]),
            f"M @ (sin a, cos a) untuk a = {a:.4g} (harus (sin(a + theta), cos(a + theta)); "
            "periksa letak tanda minus)",
            inputs=shown,
        )

    for example in ((0.7, 0.3), (1.1, -1.2)):
        body(example)
    g.for_all(s.angle_pairs, 15, body)


# -- shift_encoding (3 points) ----------------------------------------------------------------
@builds_on("shift_encoding", "rotation_matrix")
def shift_from_rotations(rotation_matrix, pe, k, base=10000.0):
    """shift_encoding as the rotation property reads: pair i of each row times M(omega_i k)."""
    pe = np.asarray(pe, dtype=float)
    d_model = pe.shape[-1]
    if d_model % 2 != 0:
        raise ValueError("d_model ganjil")
    out = np.empty_like(pe)
    for i, omega in enumerate(base ** (-np.arange(0, d_model, 2) / d_model)):
        m = np.asarray(rotation_matrix(omega * k), dtype=float)
        if m.shape != (2, 2):
            raise ValueError("rotation_matrix memberi bentuk yang tidak bisa dipakai")
        out[..., 2 * i : 2 * i + 2] = pe[..., 2 * i : 2 * i + 2] @ m.T
    return out


@check(
    "shift_encoding",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: [sin 1, cos 1] digeser 2, PE(1) digeser 2, PE[0:5] digeser 3, k negatif",
)
def shift_chapter(g: Grader) -> None:
    for case in cases("shift_encoding"):
        g.expect("shift_encoding", *case.args)


@check(
    "shift_encoding",
    "acak",
    clause="K2",
    title="Baris acak (d,) dan (T, d), k acak (termasuk negatif) dan base acak dibandingkan dengan referensi",
)
def shift_random(g: Grader) -> None:
    g.for_all(s.shift_inputs, 20, lambda ex: g.expect("shift_encoding", ex[0], ex[1], **s.base_kwargs(ex[2])))


@check(
    "shift_encoding",
    "k-nol-dan-negatif",
    clause="K3",
    title="k = 0 mengembalikan input; k negatif menggeser mundur; satu baris (d,) dan d_model = 2",
)
def shift_edges(g: Grader) -> None:
    row = np.array([0.3, -1.2, 2.0, 0.5, -0.7, 1.1])
    g.expect("shift_encoding", row, 0)
    g.expect("shift_encoding", row, -3)
    g.expect("shift_encoding", np.array([[0.6, 0.8], [-1.0, 0.0]]), 5)


@check("shift_encoding", "d-ganjil", clause="K4", title="ValueError untuk d_model ganjil")
def shift_odd(g: Grader) -> None:
    g.expect_raises("shift_encoding", "ValueError", np.zeros(5), 1)
    g.expect_raises("shift_encoding", "ValueError", np.ones((3, 7)), 2)


@check(
    "shift_encoding",
    "sama-dengan-pe-tergeser",
    clause="K1",
    title="shift_encoding(PE(p), k) = PE(p + k) untuk tabel PE, termasuk k negatif dan k = 500",
)
def shift_matches_pe(g: Grader) -> None:
    far = g.ref("positional_encoding", 503, 8)
    shown = "shift_encoding(PE[0:3], 500) untuk d_model = 8"
    assert_close(
        g.call("shift_encoding", far[:3], 500), far[500:503], "keluaran (harus PE[500:503])", inputs=shown
    )

    def body(example) -> None:
        d_model, base, start, count, k, single = example
        table = g.ref("positional_encoding", start + count + max(k, 0), d_model, base)
        rows = table[start] if single else table[start : start + count]
        want = table[start + k] if single else table[start + k : start + k + count]
        where = f"PE({start})" if single else f"PE[{start}:{start + count}]"
        out = g.call("shift_encoding", rows, k, **s.base_kwargs(base))
        assert_close(
            out,
            want,
            f"keluaran (harus PE pada posisi + {k})",
            inputs=f"shift_encoding({where}, {k}) untuk d_model = {d_model}, base = {base:g}",
        )

    g.for_all(s.pe_shift_inputs, 20, body)


@check("shift_encoding", "menjaga-norma", clause="K1", title="Rotasi menjaga norma tiap baris")
def shift_keeps_norm(g: Grader) -> None:
    def body(example) -> None:
        pe, k, base = example
        kwargs = s.base_kwargs(base)
        shown = f"shift_encoding({brief(pe)}, {k}" + (f", base={base:g})" if kwargs else ")")
        out = as_array(g.call("shift_encoding", pe, k, **kwargs), pe.shape, f"keluaran `{shown}`")
        assert_close(
            np.atleast_1d(np.linalg.norm(out, axis=-1)),
            np.atleast_1d(np.linalg.norm(pe, axis=-1)),
            "norma baris setelah digeser (rotasi tidak boleh mengubah panjang)",
            inputs=shown,
        )

    g.for_all(s.shift_inputs, 15, body)


@check("shift_encoding", "bisa-dibalik", clause="K3", title="Menggeser k lalu -k kembali ke input")
def shift_inverse(g: Grader) -> None:
    def body(example) -> None:
        pe, k, base = example
        kwargs = s.base_kwargs(base)
        shown = f"shift_encoding(shift_encoding({brief(pe)}, {k}), {-k})"
        there = as_array(g.call("shift_encoding", pe, k, **kwargs), pe.shape, f"keluaran `{shown}`")
        back = g.call("shift_encoding", there, -k, **kwargs)
        assert_close(back, pe, "keluaran (harus kembali ke pe)", atol=1e-7, inputs=shown)

    g.for_all(s.shift_inputs, 15, body)


# -- apply_rope (3 points) --------------------------------------------------------------------
@check(
    "apply_rope",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: x = [[1, 0], [1, 0], [0, 1]], positions = [3], d = 4 dengan posisi 5",
)
def rope_chapter(g: Grader) -> None:
    for case in cases("apply_rope"):
        g.expect("apply_rope", *case.args)


@check(
    "apply_rope",
    "acak",
    clause="K2",
    title="x, positions (bawaan, list atau array; negatif atau pecahan) dan base acak dibandingkan dengan referensi",
)
def rope_random(g: Grader) -> None:
    def body(example) -> None:
        x, positions, base = example
        if positions is None:
            g.expect("apply_rope", x, **s.base_kwargs(base))
        else:
            g.expect("apply_rope", x, positions, **s.base_kwargs(base))

    g.for_all(s.rope_inputs, 20, body)


@check("apply_rope", "d-ganjil", clause="K3", title="ValueError untuk d ganjil")
def rope_odd(g: Grader) -> None:
    g.expect_raises("apply_rope", "ValueError", np.ones((2, 3)))
    g.expect_raises("apply_rope", "ValueError", np.ones((1, 5)), positions=[2])


@check(
    "apply_rope",
    "posisi",
    clause="K2",
    title="T = 1, posisi -7 dan 0.5, positions eksplisit [0, 1, 2] sama dengan bawaan",
)
def rope_positions(g: Grader) -> None:
    x = np.array([[0.5, -1.0, 2.0, 0.25, 1.5, -0.75]])
    g.expect("apply_rope", x)
    g.expect("apply_rope", x, positions=[-7])
    g.expect("apply_rope", x, positions=np.array([0.5]))
    x = np.arange(12, dtype=float).reshape(3, 4) - 5
    default = as_array(g.call("apply_rope", x), (3, 4), "keluaran `apply_rope(x)` untuk x (3, 4)")
    assert_close(
        g.call("apply_rope", x, positions=[0, 1, 2]),
        default,
        "keluaran (harus sama dengan posisi bawaan)",
        inputs=f"apply_rope({brief(x)}, positions=[0, 1, 2])",
    )


@check(
    "apply_rope",
    "menjaga-norma",
    clause="K1",
    title="Rotasi menjaga norma tiap baris, posisi 0 tidak diputar, posisi -p membatalkan posisi p",
)
def rope_norms(g: Grader) -> None:
    def body(example) -> None:
        x, positions, base = example
        pos = np.arange(x.shape[0], dtype=float) if positions is None else np.asarray(positions, dtype=float)
        kwargs = s.base_kwargs(base)
        shown = f"apply_rope({brief(x)}, {brief(pos)}" + (f", base={base:g})" if kwargs else ")")
        out = as_array(g.call("apply_rope", x, pos, **kwargs), x.shape, f"keluaran `{shown}`")
        assert_close(
            np.linalg.norm(out, axis=1),
            np.linalg.norm(x, axis=1),
            "norma tiap baris (rotasi tidak boleh mengubah panjang)",
            inputs=shown,
        )
        back = g.call("apply_rope", out, -pos, **kwargs)
        assert_close(
            back, x, "apply_rope(apply_rope(x, p), -p) (harus kembali ke x)", atol=1e-7, inputs=shown
        )
        first = g.call("apply_rope", x[:1], **kwargs)
        assert_close(
            first, x[:1], "baris di posisi 0 (sudut 0: tidak diputar)", inputs=f"apply_rope({brief(x[:1])})"
        )

    g.for_all(s.rope_inputs, 15, body)


@check(
    "apply_rope",
    "hanya-posisi-relatif",
    clause="K1",
    title="Menggeser semua posisi q dan k dengan konstanta c tidak mengubah skor q·k setelah RoPE",
)
def rope_relative(g: Grader) -> None:
    def body(example) -> None:
        q, k, pos_q, pos_k, c, base = example
        kw = s.base_kwargs(base)
        shown = (
            f"apply_rope(q, {brief(pos_q)}) dan apply_rope(k, {brief(pos_k)}), lalu posisi + {c}; "
            f"q = {brief(q)}, k = {brief(k)}" + (f", base={base:g}" if kw else "")
        )
        rq = as_array(g.call("apply_rope", q, pos_q, **kw), q.shape, "keluaran `apply_rope(q, pos_q)`")
        rk = as_array(g.call("apply_rope", k, pos_k, **kw), k.shape, "keluaran `apply_rope(k, pos_k)`")
        rq_c = as_array(
            g.call("apply_rope", q, pos_q + c, **kw), q.shape, "keluaran `apply_rope(q, pos_q + c)`"
        )
        rk_c = as_array(
            g.call("apply_rope", k, pos_k + c, **kw), k.shape, "keluaran `apply_rope(k, pos_k + c)`"
        )
        assert_close(
            rq_c @ rk_c.T,
            rq @ rk.T,
            f"skor setelah menggeser semua posisi dengan c = {c} (harus sama: "
            "skor RoPE hanya bergantung pada selisih posisi)",
            atol=1e-6,
            inputs=shown,
        )

    g.for_all(s.rope_relative_inputs, 15, body)


# -- rope_scores (2 points) -------------------------------------------------------------------
@builds_on("rope_scores", "apply_rope")
def scores_from_rope(apply_rope, q, k, base=10000.0):
    """rope_scores as the notebook asks: apply_rope(q) @ apply_rope(k).T with the same base."""
    rq = np.asarray(apply_rope(q, base=base), dtype=float)
    rk = np.asarray(apply_rope(k, base=base), dtype=float)
    if rq.shape != np.shape(q) or rk.shape != np.shape(k):
        raise ValueError("apply_rope memberi bentuk yang tidak bisa dipakai")
    return rq @ rk.T


@check(
    "rope_scores",
    "contoh-bab",
    clause="K1",
    title="Contoh dari bab: q = k = [[1, 0]] * 3 (S = cos(m - n)) dan Tq = 2, Tk = 5",
)
def scores_chapter(g: Grader) -> None:
    for case in cases("rope_scores"):
        g.expect("rope_scores", *case.args, atol=1e-6)


@check(
    "rope_scores",
    "acak",
    clause="K2",
    title="q, k (Tq ≠ Tk) dan base acak dibandingkan dengan referensi",
)
def scores_random(g: Grader) -> None:
    g.for_all(
        s.rope_scores_inputs,
        20,
        lambda ex: g.expect("rope_scores", ex[0], ex[1], atol=1e-6, **s.base_kwargs(ex[2])),
    )


@check(
    "rope_scores",
    "toeplitz",
    clause="K1",
    title="Isi sama di semua posisi: skor konstan sepanjang diagonal dan S[0, 0] = q · k",
)
def scores_toeplitz(g: Grader) -> None:
    def body(example) -> None:
        v, w, tq, tk, base = example
        kw = s.base_kwargs(base)
        shown = f"rope_scores(q = {tq} salinan {brief(v)}, k = {tk} salinan {brief(w)}" + (
            f", base={base:g})" if kw else ")"
        )
        scores = as_array(
            g.call("rope_scores", np.tile(v, (tq, 1)), np.tile(w, (tk, 1)), **kw),
            (tq, tk),
            f"keluaran `{shown}`",
        )
        if not np.allclose(scores[1:, 1:], scores[:-1, :-1], rtol=1e-6, atol=1e-6):
            raise CheckFailed(
                f"Keluaran {shown} tidak konstan sepanjang diagonal (S[m+1, n+1] ≠ S[m, n]): "
                "skor RoPE harus hanya bergantung pada m - n. Putar q dan k dengan aturan yang sama.",
                input=shown,
            )
        assert_close(
            scores[0, 0],
            float(v @ w),
            "S[0, 0] (posisi 0 tidak diputar: harus v · w)",
            atol=1e-6,
            inputs=shown,
        )

    g.for_all(s.tiled_rope_inputs, 15, body)


@check(
    "rope_scores",
    "hanya-offset",
    clause="K1",
    title="S[m, n] = q · R(n - m) k: skor hanya ditentukan oleh offset relatif n - m",
)
def scores_offset(g: Grader) -> None:
    def body(example) -> None:
        v, w, tq, tk, base = example
        shown = f"rope_scores(q = {tq} salinan {brief(v)}, k = {tk} salinan {brief(w)}, base={base:g})"
        scores = as_array(
            g.call("rope_scores", np.tile(v, (tq, 1)), np.tile(w, (tk, 1)), **s.base_kwargs(base)),
            (tq, tk),
            f"keluaran `{shown}`",
        )
        offsets = np.arange(-(tq - 1), tk)
        rotated = g.ref("apply_rope", np.tile(w, (offsets.size, 1)), offsets.astype(float), base=base)
        by_offset = dict(zip(offsets.tolist(), rotated @ v, strict=True))
        expected = np.array([[by_offset[n - m] for n in range(tk)] for m in range(tq)])
        assert_close(scores, expected, "keluaran (harus v · R(n - m) w)", atol=1e-6, inputs=shown)

    g.for_all(s.tiled_rope_inputs, 10, body)

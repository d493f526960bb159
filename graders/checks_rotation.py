"""Checks for 03_rotation: rotation_matrix, shift_encoding, apply_rope, rope_scores."""

from __future__ import annotations

import numpy as np

from pe_course.checks import CheckFailed, Grader, assert_close, check, draw, require_shape

from . import strategies as s
from .cases import cases

NOTEBOOK = "03_rotation"


# -- rotation_matrix (1 point) ----------------------------------------------------------------
@check("rotation_matrix", "contoh-bab", points=0.25,
       title="Contoh dari bab: theta = 0.3, pi/2 dan sudut cek rotasi (pos = 1, k = 2)")
def rotation_chapter(g: Grader) -> None:
    for case in cases("rotation_matrix"):
        g.expect("rotation_matrix", *case.args, public=case.public)


@check("rotation_matrix", "acak", points=0.25, title="Sudut acak dibandingkan dengan solusi referensi")
def rotation_random(g: Grader) -> None:
    for theta in draw(s.rotation_angles, 20):
        g.expect("rotation_matrix", theta)


@check("rotation_matrix", "ortogonal", points=0.25, title="M(theta) ortogonal: M Mᵀ = I dan det M = 1")
def rotation_orthogonal(g: Grader) -> None:
    for theta in (0.0, -1.2, 2.5, 10.0) + draw(s.rotation_angles, 10):
        what = f"rotation_matrix({theta:.4g})"
        m = require_shape(g.call("rotation_matrix", theta), (2, 2), f"keluaran `{what}`")
        assert_close(m @ m.T, np.eye(2), f"{what} @ {what}.T (harus matriks identitas)")
        assert_close(np.linalg.det(m), 1.0, f"determinan {what}")


@check("rotation_matrix", "memutar-sin-cos", points=0.25,
       title="M(theta) memetakan (sin a, cos a) ke (sin(a + theta), cos(a + theta))")
def rotation_turns_pair(g: Grader) -> None:
    for a, theta in ((0.7, 0.3), (1.1, -1.2)) + draw(s.angle_pairs, 15):
        m = require_shape(g.call("rotation_matrix", theta), (2, 2), f"keluaran `rotation_matrix({theta:.4g})`")
        assert_close(m @ np.array([np.sin(a), np.cos(a)]), np.array([np.sin(a + theta), np.cos(a + theta)]),
                     f"rotation_matrix({theta:.4g}) @ (sin a, cos a) untuk a = {a:.4g} "
                     "(harus (sin(a + theta), cos(a + theta)); periksa letak tanda minus)")


# -- shift_encoding (3 points) ----------------------------------------------------------------
@check("shift_encoding", "contoh-bab", points=0.75,
       title="Contoh dari bab: [sin 1, cos 1] digeser 2, PE(1) digeser 2, PE[0:5] digeser 3, k negatif")
def shift_chapter(g: Grader) -> None:
    for case in cases("shift_encoding"):
        g.expect("shift_encoding", *case.args, public=case.public)


@check("shift_encoding", "acak", points=0.75,
       title="Baris acak (d,) dan (T, d), k acak (termasuk negatif) dan base acak dibandingkan dengan referensi")
def shift_random(g: Grader) -> None:
    for pe, k, base in draw(s.shift_inputs, 20):
        g.expect("shift_encoding", pe, k, **s.base_kwargs(base))


@check("shift_encoding", "tepi", points=0.5,
       title="Kasus tepi: satu baris (d,), k = 0, d_model = 2, ValueError untuk d_model ganjil")
def shift_edges(g: Grader) -> None:
    g.expect_raises("shift_encoding", "ValueError", np.zeros(5), 1, public=True)
    g.expect_raises("shift_encoding", "ValueError", np.ones((3, 7)), 2)
    row = np.array([0.3, -1.2, 2.0, 0.5, -0.7, 1.1])
    out = g.call("shift_encoding", row, 0)
    assert_close(out, row, "keluaran `shift_encoding` untuk k = 0 (harus sama dengan input)")
    g.expect("shift_encoding", row, -3, what="keluaran `shift_encoding` untuk satu baris (d,) dan k = -3")
    g.expect("shift_encoding", np.array([[0.6, 0.8], [-1.0, 0.0]]), 5,
             what="keluaran `shift_encoding` untuk d_model = 2")


@check("shift_encoding", "sama-dengan-pe-tergeser", points=0.5,
       title="shift_encoding(PE(p), k) = PE(p + k) untuk tabel PE, termasuk k negatif dan k = 500")
def shift_matches_pe(g: Grader) -> None:
    far = g.ref("positional_encoding", 503, 8)
    out = g.call("shift_encoding", far[:3], 500)
    assert_close(out, far[500:503], "shift_encoding(PE[0:3], 500) untuk d_model = 8 (harus PE[500:503])")
    for d_model, base, start, count, k, single in draw(s.pe_shift_inputs, 20):
        table = g.ref("positional_encoding", start + count + max(k, 0), d_model, base)
        rows = table[start] if single else table[start:start + count]
        want = table[start + k] if single else table[start + k:start + k + count]
        where = f"PE({start})" if single else f"PE[{start}:{start + count}]"
        out = g.call("shift_encoding", rows, k, **s.base_kwargs(base))
        assert_close(out, want, f"shift_encoding({where}, {k}) untuk d_model = {d_model}, base = {base:g} "
                     f"(harus PE pada posisi + {k})")


@check("shift_encoding", "menjaga-norma", points=0.25, title="Rotasi menjaga norma tiap baris")
def shift_keeps_norm(g: Grader) -> None:
    for pe, k, base in draw(s.shift_inputs, 15):
        out = require_shape(g.call("shift_encoding", pe, k, **s.base_kwargs(base)), pe.shape,
                            f"keluaran `shift_encoding` untuk pe berbentuk {pe.shape}")
        assert_close(np.atleast_1d(np.linalg.norm(out, axis=-1)), np.atleast_1d(np.linalg.norm(pe, axis=-1)),
                     f"norma baris setelah shift_encoding(pe, {k}) (rotasi tidak boleh mengubah panjang)")


@check("shift_encoding", "bisa-dibalik", points=0.25, title="Menggeser k lalu -k kembali ke input")
def shift_inverse(g: Grader) -> None:
    for pe, k, base in draw(s.shift_inputs, 15):
        there = require_shape(g.call("shift_encoding", pe, k, **s.base_kwargs(base)), pe.shape,
                              f"keluaran `shift_encoding` untuk pe berbentuk {pe.shape}")
        back = g.call("shift_encoding", there, -k, **s.base_kwargs(base))
        assert_close(back, pe, f"shift_encoding(shift_encoding(pe, {k}), {-k}) (harus kembali ke pe)", atol=1e-7)


# -- apply_rope (3 points) --------------------------------------------------------------------
@check("apply_rope", "contoh-bab", points=0.75,
       title="Contoh dari bab: x = [[1, 0], [1, 0], [0, 1]], positions = [3], d = 4 dengan posisi 5")
def rope_chapter(g: Grader) -> None:
    for case in cases("apply_rope"):
        g.expect("apply_rope", *case.args, public=case.public)


@check("apply_rope", "acak", points=0.75,
       title="x, positions (bawaan, list atau array) dan base acak dibandingkan dengan referensi")
def rope_random(g: Grader) -> None:
    for x, positions, base in draw(s.rope_inputs, 20):
        if positions is None:
            g.expect("apply_rope", x, **s.base_kwargs(base))
        else:
            g.expect("apply_rope", x, positions, **s.base_kwargs(base))


@check("apply_rope", "tepi", points=0.5,
       title="Kasus tepi: ValueError untuk d ganjil, T = 1, positions eksplisit sama dengan bawaan")
def rope_edges(g: Grader) -> None:
    g.expect_raises("apply_rope", "ValueError", np.ones((2, 3)), public=True)
    g.expect_raises("apply_rope", "ValueError", np.ones((1, 5)), positions=[2])
    x = np.array([[0.5, -1.0, 2.0, 0.25, 1.5, -0.75]])
    g.expect("apply_rope", x, what="keluaran `apply_rope` untuk T = 1 (posisi 0)")
    g.expect("apply_rope", x, positions=np.array([-7.0]), what="keluaran `apply_rope` untuk T = 1, posisi -7")
    x = np.arange(12, dtype=float).reshape(3, 4) - 5
    default = require_shape(g.call("apply_rope", x), (3, 4), "keluaran `apply_rope(x)` untuk x (3, 4)")
    explicit = g.call("apply_rope", x, positions=[0, 1, 2])
    assert_close(explicit, default, "apply_rope(x, positions=[0, 1, 2]) (harus sama dengan posisi bawaan)")


@check("apply_rope", "menjaga-norma", points=0.5,
       title="Rotasi menjaga norma tiap baris, posisi 0 tidak diputar, posisi -p membatalkan posisi p")
def rope_norms(g: Grader) -> None:
    for x, positions, base in draw(s.rope_inputs, 15):
        pos = np.arange(x.shape[0], dtype=float) if positions is None else np.asarray(positions, dtype=float)
        out = require_shape(g.call("apply_rope", x, pos, **s.base_kwargs(base)), x.shape,
                            f"keluaran `apply_rope` untuk x berbentuk {x.shape}")
        assert_close(np.linalg.norm(out, axis=1), np.linalg.norm(x, axis=1),
                     "norma tiap baris setelah apply_rope (rotasi tidak boleh mengubah panjang)")
        back = g.call("apply_rope", out, -pos, **s.base_kwargs(base))
        assert_close(back, x, "apply_rope(apply_rope(x, p), -p) (harus kembali ke x)", atol=1e-7)
        first = g.call("apply_rope", x[:1], **s.base_kwargs(base))
        assert_close(first, x[:1], "apply_rope untuk baris di posisi 0 (sudut 0: tidak diputar)")


@check("apply_rope", "hanya-posisi-relatif", points=0.5,
       title="Menggeser semua posisi q dan k dengan konstanta c tidak mengubah skor q·k setelah RoPE")
def rope_relative(g: Grader) -> None:
    for q, k, pos_q, pos_k, c, base in draw(s.rope_relative_inputs, 15):
        rq = require_shape(g.call("apply_rope", q, pos_q, **s.base_kwargs(base)), q.shape,
                           f"keluaran `apply_rope` untuk x berbentuk {q.shape}")
        rk = require_shape(g.call("apply_rope", k, pos_k, **s.base_kwargs(base)), k.shape,
                           f"keluaran `apply_rope` untuk x berbentuk {k.shape}")
        rq_c = require_shape(g.call("apply_rope", q, pos_q + c, **s.base_kwargs(base)), q.shape,
                             f"keluaran `apply_rope` untuk x berbentuk {q.shape}")
        rk_c = require_shape(g.call("apply_rope", k, pos_k + c, **s.base_kwargs(base)), k.shape,
                             f"keluaran `apply_rope` untuk x berbentuk {k.shape}")
        assert_close(rq_c @ rk_c.T, rq @ rk.T,
                     f"skor apply_rope(q, p + {c}) · apply_rope(k, p' + {c}) (harus sama dengan tanpa pergeseran "
                     "c: skor RoPE hanya bergantung pada selisih posisi)", atol=1e-6)


# -- rope_scores (2 points) -------------------------------------------------------------------
@check("rope_scores", "contoh-bab", points=0.5,
       title="Contoh dari bab: q = k = [[1, 0]] * 3 (S = cos(m - n)) dan Tq = 2, Tk = 5")
def scores_chapter(g: Grader) -> None:
    for case in cases("rope_scores"):
        g.expect("rope_scores", *case.args, public=case.public, atol=1e-6)


@check("rope_scores", "acak", points=0.5, title="q, k (Tq ≠ Tk) dan base acak dibandingkan dengan referensi")
def scores_random(g: Grader) -> None:
    for q, k, base in draw(s.rope_scores_inputs, 20):
        g.expect("rope_scores", q, k, atol=1e-6, **s.base_kwargs(base))


@check("rope_scores", "toeplitz", points=0.5,
       title="Isi sama di semua posisi: skor konstan sepanjang diagonal dan S[0, 0] = q · k")
def scores_toeplitz(g: Grader) -> None:
    for v, w, tq, tk, base in draw(s.tiled_rope_inputs, 15):
        what = f"rope_scores untuk q = {tq} salinan v dan k = {tk} salinan w"
        scores = require_shape(g.call("rope_scores", np.tile(v, (tq, 1)), np.tile(w, (tk, 1)), **s.base_kwargs(base)),
                               (tq, tk), f"keluaran `{what}`")
        if not np.allclose(scores[1:, 1:], scores[:-1, :-1], rtol=1e-6, atol=1e-6):
            raise CheckFailed(f"Keluaran {what} tidak konstan sepanjang diagonal (S[m+1, n+1] ≠ S[m, n]): "
                              "skor RoPE harus hanya bergantung pada m - n. Putar q dan k dengan aturan yang sama.")
        assert_close(scores[0, 0], float(v @ w), f"S[0, 0] dari {what} (posisi 0 tidak diputar: harus v · w)",
                             atol=1e-6)


@check("rope_scores", "hanya-offset", points=0.5,
       title="S[m, n] = q · R(n - m) k: skor hanya ditentukan oleh offset relatif n - m")
def scores_offset(g: Grader) -> None:
    for v, w, tq, tk, base in draw(s.tiled_rope_inputs, 10):
        what = f"rope_scores untuk q = {tq} salinan v dan k = {tk} salinan w, base = {base:g}"
        scores = require_shape(g.call("rope_scores", np.tile(v, (tq, 1)), np.tile(w, (tk, 1)), **s.base_kwargs(base)),
                               (tq, tk), f"keluaran `{what}`")
        offsets = np.arange(-(tq - 1), tk)
        rotated = g.ref("apply_rope", np.tile(w, (offsets.size, 1)), offsets.astype(float), base=base)
        by_offset = dict(zip(offsets.tolist(), rotated @ v, strict=True))
        expected = np.array([[by_offset[n - m] for n in range(tk)] for m in range(tq)])
        assert_close(scores, expected, f"{what} (harus v · R(n - m) w)", atol=1e-6)

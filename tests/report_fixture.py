"""A hand-built ReportData with every part of the report in use (no gradebook needed)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from pe_course.report import CellStat, ClauseStat, Issue, MisconceptionStat, ReportData, StudentReport


def sample_report_data() -> ReportData:
    notebooks = ["01_embedding", "02_sinusoidal"]
    students = [
        StudentReport(
            "ani",
            {"01_embedding": 9.0, "02_sinusoidal": 6.0},
            15.0,
            0.0,
            manual=[("01_embedding", "answer_untrained_positions")],
        ),
        StudentReport(
            "budi<script>",
            {"01_embedding": 3.0, "02_sinusoidal": 0.0},
            3.0,
            1.0,
            missing=["02_sinusoidal"],
            issues=[
                Issue("budi<script>", "02_sinusoidal", "missing-notebook"),
                Issue("budi<script>", "01_embedding", "suspected-tampering", "patched np.allclose"),
            ],
        ),
        StudentReport(
            "citra",
            {"01_embedding": 5.5, "02_sinusoidal": 4.0},
            9.5,
            0.0,
            issues=[
                Issue("citra", "", "late", "submitted 2.0 h after the due date"),
                Issue("citra", "02_sinusoidal", "no-grading-record"),
            ],
        ),
    ]
    cells = [
        CellStat("01_embedding", "test_embed", 3.0, [3.0, 0.0, 3.0], Counter(ok=2, failed=1)),
        CellStat("01_embedding", "test_one_hot", 1.0, [1.0, 1.0, 0.0], Counter(ok=2, timeout=1)),
        CellStat("02_sinusoidal", "test_frequencies", 1.0, [1.0, 1.0], Counter(ok=2)),
    ]
    embed = ("01_embedding", "test_embed")
    one_hot = ("01_embedding", "test_one_hot")
    clauses = [
        ClauseStat(
            *embed,
            "K1",
            "`h[t] = tok_table[ids[t]] + pos_table[t]`; hasilnya berbentuk `(T, d)`.",
            2.0,
            3,
            3,
            ["budi<script>"],
            Counter({"embed([2, 0, 2], ...): didapat [[0, 0]], seharusnya [[5, 5]] & <b>": 1}),
            Counter({"embed([2, 0, 2], [[1., 0.]], [[0.], [1.]])": 1}),
            Counter({"kasus": 1, "acak": 1}),
        ),
        ClauseStat(*embed, "K2", "`ids` boleh kosong (`T = 0`): hasilnya berbentuk `(0, d)`.", 0.5, 3, 3),
        ClauseStat(
            *embed,
            "K10",
            "`ValueError` dilempar tepat jika `T > block_size`.",
            0.5,
            3,
            3,
            ["budi<script>"],
            Counter({"`embed` tidak melempar ValueError untuk T > block_size.": 1}),
            Counter({"embed([0, 0], [[0.]], [[0.]])": 1}),
            Counter({"batas-block-size": 1}),
        ),
        ClauseStat(
            *one_hot,
            "K1",
            "Baris ke-`t` berisi `1` tepat di kolom `ids[t]`; nilai $x$ tetap.",
            0.5,
            3,
            3,
            ["citra"],
            Counter({"Waktu habis untuk one_hot([0, 1], 2).": 1}),
            Counter({"one_hot([0, 1], 2)": 1}),
            Counter({"kasus": 1}),
        ),
        ClauseStat(
            *one_hot,
            "K2",
            "`ids` boleh berupa list Python.",
            0.5,
            3,
            3,
            ["citra"],
            Counter({"Tidak ada keluaran yang dapat diperiksa: waktu habis.": 1}),
        ),
        ClauseStat(
            "02_sinusoidal", "test_frequencies", "K1", "`omega[i] = base ** (-2i / d_model)`.", 1.0, 2, 1
        ),
    ]
    misconceptions = [
        MisconceptionStat("embed", "concat-not-add", "Jumlahkan, jangan gabungkan.", ["budi<script>"]),
        MisconceptionStat("one_hot", "unknown-id", None, ["citra"]),
    ]
    return ReportData(
        "positional-encoding",
        datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc),
        datetime(2026, 11, 30, 23, 59),
        notebooks,
        {"01_embedding": 9.0, "02_sinusoidal": 6.0},
        students,
        cells,
        clauses,
        misconceptions,
        no_submission=["dewi"],
        not_graded=["eko"],
    )

"""A hand-built ReportData with every part of the report in use (no gradebook needed)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from pe_course.report import CellStat, CheckStat, Issue, MisconceptionStat, ReportData, StudentReport


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
            issues=[Issue("citra", "", "late", "submitted 2.0 h after the due date")],
        ),
    ]
    cells = [
        CellStat("01_embedding", "test_embed", 3.0, [3.0, 0.0, 3.0], Counter(ok=2, failed=1)),
        CellStat("01_embedding", "test_one_hot", 1.0, [1.0, 1.0, 0.0], Counter(ok=2, timeout=1)),
        CellStat("02_sinusoidal", "test_frequencies", 1.0, [1.0, 1.0], Counter(ok=2)),
    ]
    checks = [
        CheckStat(
            "01_embedding",
            "test_embed",
            "example",
            "contoh dari bab",
            1.0,
            3,
            2,
            Counter({"embed([2, 0, 2], ...): didapat [[0, 0]], seharusnya [[5, 5]] & <b>": 1}),
        ),
        CheckStat("01_embedding", "test_embed", "empty", "ids kosong", 1.0, 3, 3),
        CheckStat("01_embedding", "test_one_hot", "values", "nilai $x$", 1.0, 3, 1, Counter({"salah": 2})),
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
        checks,
        misconceptions,
        no_submission=["dewi"],
        not_graded=["eko"],
    )

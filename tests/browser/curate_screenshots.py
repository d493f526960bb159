"""Copy the guides' screenshots (docs/instructor-guide.md, docs/panduan-mahasiswa.md) from the last
browser-test run into docs/img/, cropped and reduced to a small palette (each well under 150 KB). Run by
hand after `pytest -m browser`:

    python tests/browser/curate_screenshots.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent
ARTIFACTS = HERE / "artifacts"
OUT = HERE.parents[1] / "docs" / "img"
STUDENT = "test_student_fetches_works_validates_and_submits-chromium"
GRADER = "test_grader_grades_the_written_answer_with_the_rubric_and_the_student_reads_feedback-chromium"
REPORT = "test_report_renders_cleanly_with_working_images_and_links_at_desktop_and_phone_widths-chromium"
LAB_MAIN = (288, 28, 1245, 876)  # JupyterLab without its side bars
# docs/img name: (test folder, screenshot, crop box or None)
PICKS = {
    "student-1-assignment-list.png": (STUDENT, "02-assignment-list-fetched.png", (0, 0, 1245, 460)),
    "student-2-stub-error.png": (STUDENT, "03-stub-error.png", LAB_MAIN),
    "student-3-hint.png": (STUDENT, "07-hint.png", LAB_MAIN),
    "student-4-heatmap.png": (STUDENT, "05-heatmap.png", LAB_MAIN),
    "student-5-validate.png": (STUDENT, "08-validate-success.png", LAB_MAIN),
    "student-6-submitted.png": (STUDENT, "09-submitted.png", (0, 0, 1245, 460)),
    "student-7-feedback.png": (GRADER, "06-feedback-opened.png", None),
    "grader-1-rubric-and-answer.png": (GRADER, "02-formgrader-rubric-and-answer.png", None),
    "grader-2-scored.png": (GRADER, "03-formgrader-scored.png", None),
    "report-phone.png": (REPORT, "02-report-390px.png", None),
}


def curate(limit: int = 150_000) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (test, shot, box) in PICKS.items():
        image = Image.open(ARTIFACTS / test / shot).convert("RGB")
        if box:
            image = image.crop(box)
        for colors in (128, 64, 32):
            small = image.quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
            small.save(OUT / name, optimize=True)
            if (OUT / name).stat().st_size <= limit:
                break
        print(f"{name}: {(OUT / name).stat().st_size // 1000} KB", file=sys.stderr)


if __name__ == "__main__":
    curate()

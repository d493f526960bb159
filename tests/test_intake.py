"""LMS intake through the real ``nbgrader zip_collect``: what cannot be taken in is named."""

from __future__ import annotations

import nbformat
import pytest
from conftest import reference_nb

from pe_course.intake import canvas_name, lms_zip, skipped_entries


def test_skipped_entries_are_listed_with_the_reason(tmp_path):
    archive = lms_zip(tmp_path / "download.zip", {
        canvas_name("ani", 11, 21, "01_embedding.ipynb"): b"{}",
        "../escape.ipynb": b"{}", "/etc/absolute.ipynb": b"{}", "sub/../../up.ipynb": b"{}",
        canvas_name("ani", 11, 21, "laporan.pdf"): b"%PDF",
    })
    reasons = dict(skipped_entries(archive))
    assert set(reasons) == {"../escape.ipynb", "/etc/absolute.ipynb", "sub/../../up.ipynb",
                            canvas_name("ani", 11, 21, "laporan.pdf")}
    assert "absolute" in reasons["/etc/absolute.ipynb"] and "'..'" in reasons["../escape.ipynb"]
    assert "not a notebook" in reasons[canvas_name("ani", 11, 21, "laporan.pdf")]


@pytest.mark.slow
def test_zip_collect_names_every_entry_it_does_not_take_in(course_copy):
    archive_dir = course_copy.root / "downloaded" / "positional-encoding" / "archive"
    lms_zip(archive_dir / "download.zip", {
        canvas_name("ani", 11, 21, "01_embedding.ipynb"): nbformat.writes(reference_nb("01_embedding")).encode(),
        "../escape.ipynb": b"{}", "/etc/absolute.ipynb": b"{}",
        canvas_name("budi", 12, 22, "catatan.txt"): b"hai",
    })
    proc = course_copy.nbgrader("zip_collect", "positional-encoding", check=True)
    log = proc.stdout + proc.stderr
    for entry in ("../escape.ipynb", "/etc/absolute.ipynb", "budi_12_22_catatan.txt"):
        assert entry in log, f"{entry} skipped without a word:\n{log}"
    assert (course_copy.root / "submitted" / "ani" / "positional-encoding" / "01_embedding.ipynb").is_file()

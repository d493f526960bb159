"""The report's HTML from a hand-built ReportData (fast, no gradebook): golden file and escaping.

Regenerate the golden file after an intended change with ``pytest tests/report/test_report_render.py
--force-regen`` and review the diff of ``tests/report/test_report_render/``.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from report_fixture import sample_report_data

from pe_course.report import render_html
from pe_course.report.plots import clauses_by_cell

PNG = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")


def masked(html: str) -> str:
    """The report with its plots (volatile across matplotlib versions) replaced by a marker."""
    return PNG.sub("data:image/png;base64,<PNG>", html)


def test_report_html_matches_the_golden_file(file_regression):
    file_regression.check(masked(render_html(sample_report_data())), extension=".html")


def test_every_plot_is_a_real_png():
    import base64

    pngs = PNG.findall(render_html(sample_report_data()))
    assert len(pngs) == 4
    assert all(base64.b64decode(p.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])


def test_untrusted_text_is_escaped_and_the_page_is_well_formed():
    html = render_html(sample_report_data())
    parser = _Elements()
    parser.feed(html)
    assert "script" not in parser.tags, "a student id '<script>' became markup"
    assert "budi&lt;script&gt;" in html and "&amp; &lt;b&gt;" in html
    assert set(parser.links) <= parser.ids, "every in-page link lands on a section"
    assert html.count("<section") == html.count("</section>") == 5


def test_clauses_worst_cell_first_then_most_often_lost_first_with_the_share_of_submitters():
    data = sample_report_data()
    groups = clauses_by_cell(data)
    order = [(cell.grade_id, [c.clause for c in members]) for cell, members in groups]
    # test_embed and test_one_hot tie on full marks (2/3) and mean; K10 before K2: lost more often
    assert order == [
        ("test_embed", ["K1", "K10", "K2"]),
        ("test_one_hot", ["K1", "K2"]),
        ("test_frequencies", ["K1"]),
    ]
    k1 = groups[0][1][0]
    assert (k1.lost, k1.submitted, k1.lost_share) == (1, 3, 1 / 3)
    html = render_html(data)
    rows = re.findall(r'data-cell="([^"]+)" data-clause="([^"]+)"', html)
    assert rows == [(gid, k) for gid, clauses in order for k in clauses], "the table follows the plot's order"
    assert "clause results for 1 of 2 submissions" in html  # citra's 02 has no grading record

"""This suite's example cases, ``cases/<function>.json`` (the format: :mod:`pe_course.cases`)."""

from __future__ import annotations

from pathlib import Path

from pe_course.cases import case_reader

cases, run_cases = case_reader(Path(__file__).parent / "cases")

"""What a round returns (:class:`RoundSummary`), what it tells whoever watches it (:data:`Notify`), and
why a graded student needs an instructor's look (:func:`attention_reasons`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..course import Course
from ..record import notebook_attention
from .regrade_report import RegradeReport


@dataclass
class RoundSummary:
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # student -> why
    attention: dict[str, list[str]] = field(default_factory=dict)  # student -> reasons
    feedback: list[str] = field(default_factory=list)  # students whose feedback was generated
    feedback_failed: dict[str, str] = field(default_factory=dict)  # student -> why
    seconds: float = 0.0
    feedback_seconds: float = 0.0  # spent making pages from the course gradebook (not with the grades)
    merge_seconds: float = 0.0  # spent by the single writer merging results (the part no worker can share)
    to_grade: int = 0  # students this round grades (known at "start")
    feedback_owed: int = 0  # students skipped as unchanged whose feedback this round makes (known at "start")
    regrade: RegradeReport | None = (
        None  # what changed for the students graded before (pe_course.round.regrade)
    )


Notify = Callable[[str, str, RoundSummary], None]


def attention_reasons(course: Course, student: str) -> list[str]:
    """Why a graded student needs an instructor's look (see ``record.notebook_attention``)."""
    submitted = course.submitted / student / course.assignment
    graded = course.autograded / student / course.assignment
    reasons = []
    for name in sorted(p.stem for p in course.release.glob("*.ipynb")):
        for found in notebook_attention(submitted, graded, student, name)[1]:
            reasons.append(
                f"{name}: {found.kind}: {found.detail[:160]}" if found.detail else f"{name}: {found.kind}"
            )
    return list(dict.fromkeys(reasons))

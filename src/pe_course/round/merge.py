"""Each result of a round merged once, through the single writer (:mod:`.writer`): :func:`finish` stages
one student's grades, :func:`settle` commits what is staged and only then records the students as
merged (the resumable state, attention, the events); :func:`feedback_done` takes a student's pages."""

from __future__ import annotations

import time

from ..interruption import deferred
from .resume import GradeState
from .summary import Notify, RoundSummary, attention_reasons
from .task import FeedbackOutcome, GradeOutcome
from .writer import GradebookWriter


def feedback_done(summary: RoundSummary, notify: Notify, outcome: FeedbackOutcome) -> None:
    if outcome.ok:
        summary.feedback.append(outcome.student)
    else:
        summary.feedback_failed[outcome.student] = outcome.error or "generate_feedback failed"
    summary.feedback_seconds += outcome.seconds
    notify("feedback", outcome.student, summary)


def finish(
    writer: GradebookWriter,
    outcome: GradeOutcome,
    state: GradeState,
    summary: RoundSummary,
    notify: Notify,
    settle_now: bool = True,
    without_pages: list[str] | None = None,
) -> list[str]:
    """Take one worker's result: staged in the gradebook's open transaction, committed now (or, with
    ``settle_now=False``, with the next :func:`settle`, once nothing else is ready). Returns the
    students merged by this call (see :func:`settle` for ``without_pages``)."""
    if not outcome.ok:
        summary.failed[outcome.student] = outcome.error or "nbgrader autograde failed"
        state.set(outcome.student, None)
        notify("failed", outcome.student, summary)
        return settle(writer, state, summary, notify, without_pages) if settle_now else []
    started = time.monotonic()
    try:
        writer.stage(outcome)
    except Exception as exc:  # noqa: BLE001
        summary.failed[outcome.student] = f"could not write the gradebook: {exc}"
        state.set(outcome.student, None)
        notify("failed", outcome.student, summary)
    finally:
        summary.merge_seconds += time.monotonic() - started
    return settle(writer, state, summary, notify, without_pages) if settle_now or writer.full else []


def settle(
    writer: GradebookWriter,
    state: GradeState,
    summary: RoundSummary,
    notify: Notify,
    without_pages: list[str] | None = None,
) -> list[str]:
    """Commit every staged student (one transaction), then record them as merged: the resumable state,
    attention, the "graded" event (and "feedback" when their pages came with the grades; the others
    are added to ``without_pages``). Returns the students merged."""
    started = time.monotonic()
    with deferred():  # committed, moved into place and recorded: all of it or, before the commit, none
        merged, failed = writer.commit()
        for outcome in merged:
            state.set(outcome.student, outcome.fingerprint)
    summary.merge_seconds += time.monotonic() - started
    for student, why in failed.items():
        summary.failed[student] = why
        state.set(student, None)
        notify("failed", student, summary)
    for outcome in merged:
        summary.graded.append(outcome.student)
        reasons = attention_reasons(writer.course, outcome.student)
        if reasons:
            summary.attention[outcome.student] = reasons
        notify("graded", outcome.student, summary)
        if outcome.feedback:  # made with the grades, moved into place with them
            summary.feedback.append(outcome.student)
            notify("feedback", outcome.student, summary)
        elif without_pages is not None:
            without_pages.append(outcome.student)
    return [outcome.student for outcome in merged]

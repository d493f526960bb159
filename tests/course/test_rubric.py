"""The rubric of every written answer: graders see it next to the answer, students only with their feedback.

Each written question's (locked) markdown cell ends with a rubric between ``<!-- BEGIN MARK SCHEME -->``
and ``<!-- END MARK SCHEME -->``. nbgrader's ``ClearMarkScheme`` strips it from the release;
``autograde`` restores the locked question cell from the gradebook, so formgrader shows it right above
the student's answer, and the feedback (generated after grading) carries it too.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import NOTEBOOKS, REPO, release_nb

SOURCE = REPO / "source" / "positional-encoding"
BEGIN, END = "<!-- BEGIN MARK SCHEME -->", "<!-- END MARK SCHEME -->"
HEADING = "Rubrik penilaian"


def gid(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def written_questions(nb) -> list[tuple]:
    """(question cell, answer cell) pairs, the answer being the cell right after its question."""
    pairs = []
    for i, cell in enumerate(nb.cells):
        if gid(cell).startswith("question_"):
            answer = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
            pairs.append((cell, answer))
    return pairs


def rubric(source: str) -> str:
    assert source.count(BEGIN) == 1 and source.count(END) == 1, "one rubric region per question"
    return source.split(BEGIN, 1)[1].split(END, 1)[0]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_has_one_written_question_with_a_rubric_that_adds_up(name):
    nb = nbformat.read(SOURCE / f"{name}.ipynb", as_version=4)
    pairs = written_questions(nb)
    assert len(pairs) == 1, f"{name}: {len(pairs)} written questions, want one per notebook"
    question, answer = pairs[0]
    meta = answer.metadata.get("nbgrader", {}) if answer is not None else {}
    assert gid(answer).startswith("answer_") and meta.get("grade") and meta.get("solution"), (
        f"{name}: the manually graded answer cell must follow its question"
    )
    assert question.metadata["nbgrader"].get("locked"), f"{name}: the question cell must be locked"
    text = rubric(question.source)
    assert HEADING in text
    points = [float(p) for p in re.findall(r"^\|[^|\n]+\|\s*(\d+(?:\.\d+)?)\s*\|\s*$", text, flags=re.M)]
    assert len(points) >= 2, f"{name}: the rubric has no per-criterion points table"
    assert sum(points) == meta["points"], (
        f"{name}: criteria add up to {sum(points)}, the answer is worth {meta['points']}"
    )
    for part in ("Nilai sebagian", "Jawaban alternatif"):
        assert part in text, f"{name}: the rubric does not say '{part}'"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_students_do_not_see_the_rubric_in_the_release(name):
    text = "\n".join(c.source for c in release_nb(name).cells)
    assert "MARK SCHEME" not in text and HEADING not in text


def test_graders_see_the_rubric_above_the_answer_and_students_with_their_feedback(course_copy):
    """Through real nbgrader: autograde restores each rubric (silently for an untouched question cell,
    with nbgrader's change report for a tampered one), and the feedback shows it."""
    release = course_copy.root / "release" / "positional-encoding"
    untouched = {name: nbformat.read(release / f"{name}.ipynb", as_version=4) for name in NOTEBOOKS}
    course_copy.submit("ani", untouched)
    tampered = nbformat.read(release / "01_embedding.ipynb", as_version=4)
    question = written_questions(tampered)[0][0]
    question.source = "Pertanyaan diganti oleh siswa."
    course_copy.submit("budi", {"01_embedding": tampered})

    logs = {}
    for student in ("ani", "budi"):
        run = course_copy.nbgrader("autograde", "positional-encoding", "--student", student, "--force")
        assert run.returncode == 0, run.stdout + run.stderr
        logs[student] = re.findall(
            r"Attribute 'checksum' for cell (\S+) has changed", run.stdout + run.stderr
        )
    assert logs == {"ani": [], "budi": [gid(question)]}, f"cells reported as changed: {logs}"
    for student, names in (("ani", NOTEBOOKS), ("budi", ("01_embedding",))):
        for name in names:
            graded = nbformat.read(
                course_copy.root / "autograded" / student / "positional-encoding" / f"{name}.ipynb", 4
            )
            source_question = written_questions(nbformat.read(SOURCE / f"{name}.ipynb", 4))[0][0]
            graded_question = next(c for c in graded.cells if gid(c) == gid(source_question))
            assert graded_question.source == source_question.source, f"{student} {name}: rubric not restored"

    pe_course = Path(sys.executable).with_name("pe-course")
    feedback = subprocess.run(
        [str(pe_course), "feedback", "positional-encoding"],
        cwd=course_copy.root,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    html = (course_copy.root / "feedback" / "ani" / "positional-encoding" / "02_sinusoidal.html").read_text(
        "utf-8"
    )
    assert HEADING in html, "students read the rubric with their feedback"

"""The parallel grading round on a real PostgreSQL gradebook gives the same scores as serial nbgrader.

Needs a PostgreSQL server: set PE_COURSE_TEST_POSTGRES to an admin URL, e.g.
``postgresql://postgres:PASSWORD@127.0.0.1:5432/postgres`` (``.ci/run`` starts one and sets it).
"""

from __future__ import annotations

import os
import uuid

import pytest
from test_batch import CLASS, _submit_class

from pe_course.round.grade import grade_round
from pe_course.runners.local import LocalRunner

ADMIN_URL = os.environ.get("PE_COURSE_TEST_POSTGRES")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not ADMIN_URL, reason="PE_COURSE_TEST_POSTGRES (a PostgreSQL admin URL) not set"),
]


@pytest.fixture
def postgres_url():
    psycopg = pytest.importorskip("psycopg")
    name = f"pe_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_parallel_round_on_postgres_equals_serial_sqlite(make_course, postgres_url):
    serial, on_postgres = make_course("serial"), make_course("postgres")
    config = on_postgres.root / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.CourseDirectory.db_url = {postgres_url!r}\n")
    on_postgres.nbgrader("generate_assignment", "positional-encoding", "--force", check=True)
    assert on_postgres.course.db_url.startswith("postgresql")
    _submit_class(serial)
    _submit_class(on_postgres)
    serial.nbgrader("autograde", "positional-encoding", check=True)
    summary = grade_round(on_postgres.course, LocalRunner(2))
    assert sorted(summary.graded) == sorted(CLASS) and not summary.failed
    assert on_postgres.scores() == serial.scores()
    again = grade_round(on_postgres.course, LocalRunner(2))  # resumable on PostgreSQL too
    assert sorted(again.skipped) == sorted(CLASS)

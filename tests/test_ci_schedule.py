"""The README's test command under pytest-xdist (``-n 3 --dist loadgroup``) shares what it can: the tests
of a group (an ``xdist_group`` mark, or a module of ``ONE_WORKER_MODULES``) run on one worker, so the
fixtures they share are built once, and the longest runs start first. Checked on the real suite's
collection, each test skipped at its setup (a probe plugin records which worker had it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections import defaultdict

import pytest
from conftest import REPO, readme_test_command

pytestmark = pytest.mark.slow

PROBE = textwrap.dedent(
    """
    import json, os, pytest

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(item):
        with open(os.environ["PE_COURSE_PROBE_OUT"], "a", encoding="utf-8") as out:
            out.write(json.dumps([os.environ.get("PYTEST_XDIST_WORKER"), item.nodeid]) + "\\n")
        pytest.skip("probe: where the test would run")
    """
)
BUILT_CLONE = (
    "test_the_guides_instructor_round_runs_as_written_on_a_fresh_copy",
    "test_build_selfcheck_passes",
)


def _readme_workers() -> int:
    """The number of pytest-xdist workers the README's test command asks for."""
    found = re.search(r"pytest -n (\d+) ", readme_test_command())
    assert found, "the README's test command runs pytest -n N"
    return int(found.group(1))


def test_a_group_runs_on_one_worker_and_the_longest_runs_start_first(tmp_path):
    n = _readme_workers()
    (tmp_path / "pe_course_probe.py").write_text(PROBE, encoding="utf-8")
    ran_file = tmp_path / "ran.jsonl"
    modules = [
        "tests/test_docs.py",
        "tests/build/test_self_validation.py",
        "tests/sandbox/test_hostile.py",
        "tests/e2e/test_demo.py",
        "tests/browser/test_round.py",  # the browser round: a group of the parallel phase
        "tests/e2e/test_shared_server.py",
        "tests/browser/test_hub.py",  # the JupyterHub round: in the shared server's group (the same users)
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", str(n), "--dist", "loadgroup", "-q"]
        + ["-p", "pe_course_probe", "-p", "no:cacheprovider", *modules],
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
            "PE_COURSE_PROBE_OUT": str(ran_file),
        },
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ran = [json.loads(line) for line in ran_file.read_text(encoding="utf-8").splitlines()]
    assert len({worker for worker, _ in ran}) == n, "every worker had tests"
    workers = defaultdict(set)
    for worker, nodeid in ran:
        name = nodeid.split("::")[-1].split("[")[0].split("@")[0]
        if name in BUILT_CLONE:
            assert nodeid.endswith("@built-clone"), nodeid
            workers["built-clone"].add(worker)
        elif nodeid.startswith("tests/sandbox/test_hostile.py"):  # a module of ONE_WORKER_MODULES
            assert nodeid.endswith("@test_hostile"), nodeid
            workers["test_hostile"].add(worker)
        elif nodeid.startswith("tests/browser/test_round.py"):
            assert nodeid.endswith("@test_round"), nodeid
            workers["test_round"].add(worker)
        elif nodeid.startswith(("tests/e2e/test_shared_server.py", "tests/browser/test_hub.py")):
            assert nodeid.endswith("@test_shared_server"), nodeid
            workers["test_shared_server"].add(worker)
    assert {group: len(on) for group, on in workers.items()} == {
        "built-clone": 1,
        "test_hostile": 1,
        "test_round": 1,
        "test_shared_server": 1,
    }
    first = {}
    for worker, nodeid in ran:
        first.setdefault(worker, nodeid)
    # LONGEST_FIRST: the shared server's group (the JupyterHub round first) starts on one worker, and
    # the others start with the next longest (the demo, the browser round)
    starts = [nodeid.split("::")[0] for nodeid in first.values()]
    assert len(set(starts) & {"tests/e2e/test_shared_server.py", "tests/browser/test_hub.py"}) == 1, first
    next_longest = {"tests/e2e/test_demo.py", "tests/browser/test_round.py"}
    assert len(set(starts) & next_longest) == min(n - 1, len(next_longest)), first

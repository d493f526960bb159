"""The sandbox's self-test (issue 32): hostile probes run once per machine before it grades; grading
refuses where one gets through."""

from __future__ import annotations

import json

import pytest
from conftest import requires_bwrap

from pe_course.sandbox import IsolationUnavailable, Sandbox, groups, selftest

requires_groups = pytest.mark.skipif(groups.mechanism() is None, reason="no control group can be made here")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "pe-course"


@requires_bwrap
@requires_groups
def test_the_sandbox_holds_every_probe_and_the_pass_is_remembered(cache):
    selftest.ensure(grouped=True)
    (stamp,) = cache.glob("sandbox-selftest-*.json")
    assert stamp == selftest.stamp_path(grouped=True)

    found = {f["probe"]: f["held"] for f in json.loads(stamp.read_text())["findings"]}
    assert found == {
        "file theft": True,
        "network": True,
        "memory across processes": True,
        "a process left running": True,
    }, found
    before = stamp.stat().st_mtime_ns
    selftest.ensure(grouped=True)  # remembered: not run again
    assert stamp.stat().st_mtime_ns == before
    assert not list(cache.glob("selftest-canary-*")), "the canary is removed"


def test_a_probe_that_gets_through_refuses_in_one_line_and_nothing_is_remembered(cache):
    # without bubblewrap (the trusted-code opt-in's fallback) the network is reachable: a real escape
    weak = Sandbox(use_bwrap=False, unisolated=True, use_groups=False, ungrouped=True)
    with pytest.raises(IsolationUnavailable) as refused:
        selftest.ensure(grouped=False, sandbox=weak)
    said = str(refused.value)
    assert said.startswith(
        "Refusing to run student code: the sandbox's self-test got through on this machine"
    )
    assert "network (127.0.0.1:" in said and "\n" not in said
    assert "pe-course check-sandbox" in said
    assert not list(cache.glob("sandbox-selftest-*.json")), "a failed self-test is not remembered as a pass"


def test_the_stamp_depends_on_machine_user_groups_and_sandbox_code(cache, monkeypatch):
    grouped, ungrouped = selftest.stamp_path(True), selftest.stamp_path(False)
    assert grouped != ungrouped
    monkeypatch.setattr(selftest, "_sandbox_code_digest", lambda: "changed")
    assert selftest.stamp_path(True) != grouped  # a new version of the sandbox is tested again


@requires_bwrap
@requires_groups
def test_check_sandbox_prints_every_probe(cache):
    from conftest import REPO, pe_course

    done = pe_course(REPO, "check-sandbox")
    assert done.returncode == 0, done.stdout + done.stderr
    for probe in ("file theft", "network", "memory across processes", "a process left running"):
        assert probe in done.stdout
    assert "Every probe held" in done.stdout

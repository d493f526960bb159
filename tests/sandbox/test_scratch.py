"""Removing a run's scratch directory (pe_course.sandbox.scratch.remove_tree): whatever the run left
inside is removed, and nothing outside is ever changed. Found in a test run: a scratch directory removed
twice (a stop signal's teardown, then the run's own cleanup) made the second removal chmod its parent —
the shared /tmp — to 0700, and every other unix user lost /tmp."""

from __future__ import annotations

import os
import stat

from pe_course.sandbox.scratch import remove_tree


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_tree_already_removed_leaves_its_parent_as_it_was(tmp_path):
    parent = tmp_path / "shared-tmp"
    parent.mkdir()
    parent.chmod(0o1777)
    remove_tree(parent / "pe-sandbox-gone")  # removed meanwhile by the teardown
    assert _mode(parent) == 0o1777


def test_what_the_run_locked_inside_is_removed_and_the_parent_kept(tmp_path):
    parent = tmp_path / "shared-tmp"
    parent.mkdir()
    parent.chmod(0o1777)
    scratch = parent / "pe-sandbox-x"
    (scratch / "locked" / "deeper").mkdir(parents=True)
    (scratch / "locked" / "deeper" / "f").write_text("x")
    (scratch / "locked" / "deeper").chmod(0)
    (scratch / "locked").chmod(0)
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o555)
    (scratch / "link").symlink_to(outside)
    scratch.chmod(0o500)
    remove_tree(scratch)
    assert not scratch.exists()
    assert _mode(parent) == 0o1777 and _mode(outside) == 0o555

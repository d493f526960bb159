"""Whether student code may run here: bubblewrap or nothing, unless the instructor opts in.

Grading fails closed. Every path that runs student code (``pe-course grade``, ``nbgrader autograde``
through our pipeline, ``pytest graders --submission``, a Dask worker) builds its
:class:`~pe_course.sandbox.Sandbox` with ``use_bwrap=None``, which raises
:class:`IsolationUnavailable` when bubblewrap does not work on this machine — before anything runs and
before anything is written.

The only way past it is an explicit opt-in meant for trusted code (the instructor's own test
solutions, a course's self-test): ``--unisolated`` on the command line, or in ``nbgrader_config.py``::

    c.Isolation.required = False  # TRUSTED CODE ONLY: runs submissions without bubblewrap

Every record graded that way says so in its ``isolation`` field, and the round's summary and the
report mark those students.

The same holds for resource groups (:mod:`.groups`): without a control group for each run, memory and
process limits are per process and, for an ordinary user, the process limit is shared by every run of
that user, so one submission could make another fail. Where no group can be made the sandbox raises
:class:`IsolationUnavailable` with the fix (``sudo pe-course setup-groups --user NAME``, see
:mod:`.delegation`) unless the instructor accepts that risk by name: ``--without-resource-groups``, or
``c.Isolation.resource_groups_required = False``. Runs are then one at a time on the machine (per
user, :mod:`.sharing`), so that one student's processes never count against another's run.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess

from traitlets import Bool
from traitlets.config import Configurable

NOBODY = 65534
INSTALL = "sudo apt-get install -y bubblewrap"
OPT_IN = "for trusted code only: --unisolated, or c.Isolation.required = False"
GROUPS_OPT_OUT = "--without-resource-groups, or c.Isolation.resource_groups_required = False"
# the pages of the guide that explain each fix (docs/; tests/test_docs.py checks every such link)
PLATFORMS = "docs/getting-started.md#supported-platforms"
SHARED_SERVER = "docs/deployment.md#a-shared-server-the-instructor-an-ordinary-user"


class IsolationUnavailable(RuntimeError):
    """bubblewrap does not work here and nobody opted in: one line saying what is missing and what to do."""


class Isolation(Configurable):
    """nbgrader configuration: ``c.Isolation.required``."""

    required = Bool(
        True,
        help="Refuse to run student code without bubblewrap (the default). False is for TRUSTED code only "
        "(the instructor's own test solutions, a course self-test): without bubblewrap student code can "
        "read what the grading user can read and use the network. The same as pe-course grade --unisolated.",
    ).tag(config=True)
    resource_groups_required = Bool(
        True,
        help="Refuse to run student code where no resource group (control group) can be made for each "
        "run (the default; an administrator gives an ordinary user one with `sudo pe-course setup-groups "
        "--user NAME`). False accepts the risk: memory and process limits per process only, so a "
        "submission can use them several times over; runs are then one at a time. The same as "
        "pe-course grade --without-resource-groups.",
    ).tag(config=True)
    prefork = Bool(
        True,
        help="Fork each student's notebook runner and kernel from a process that has imported them already "
        "(sandbox/inside/zygote.py; about 0.9 CPU-seconds less per student), into a sandbox made as for every run. "
        "False starts them afresh in the sandbox. Only with bubblewrap.",
    ).tag(config=True)


def unisolated_allowed(config) -> bool:
    """True when nbgrader's configuration opts in to running without bubblewrap."""
    return config is not None and not Isolation(config=config).required


def ungrouped_allowed(config) -> bool:
    """True when nbgrader's configuration accepts runs without a resource group."""
    return config is not None and not Isolation(config=config).resource_groups_required


def check(config=None, unisolated: bool = False, ungrouped: bool = False) -> None:
    """Raise :class:`IsolationUnavailable` unless bubblewrap works here or the instructor opted in
    (``unisolated``, or ``c.Isolation.required = False`` in ``config``), and likewise for resource
    groups (``ungrouped``, ``c.Isolation.resource_groups_required = False``; trusted code needs none).
    What runs student code calls :func:`.selftest.check`, which adds the machine's self-test."""
    unisolated = unisolated or unisolated_allowed(config)
    problem = bwrap_problem()
    if problem is not None and not unisolated:
        raise IsolationUnavailable(refusal(problem))
    from .groups import mechanism

    grouped = mechanism() is not None
    if not (grouped or unisolated or ungrouped or ungrouped_allowed(config)):
        raise IsolationUnavailable(group_refusal())


def group_refusal() -> str:
    """The one line that refuses to run student code without a resource group."""
    who = "root" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    fix = (
        "no writable cgroup v1 memory/pids/cpuacct/freezer or delegated cgroup v2 memory/pids here"
        if who == "root"
        else f"an administrator makes one for this user once with `sudo pe-course setup-groups --user {who}` "
        "(or, with systemd, grade under `systemd-run --user --scope -p Delegate=yes`)"
    )
    return (
        f"Refusing to run student code: no resource group (control group) can be made for each run as {who}, "
        f"so one submission's processes could make another's fail; {fix} (to accept that risk: {GROUPS_OPT_OUT}; "
        f"guide: {SHARED_SERVER})."
    )


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate student code on this machine, or None when it works."""
    if os.environ.get("PE_COURSE_NO_BWRAP"):
        return "bubblewrap is switched off here (PE_COURSE_NO_BWRAP is set)"
    path = shutil.which("bwrap")
    if path is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        probe = subprocess.run(
            [path, *_PROBE, "/usr/bin/true"], capture_output=True, timeout=30, check=False, text=True
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap ({path}) could not be started: {exc}"
    if probe.returncode == 0:
        return None
    said = " ".join(probe.stderr.split())[:200] or f"exit status {probe.returncode}"
    return (
        f"bwrap ({path}) cannot create its namespaces here ({said}): user namespaces are probably off "
        "(sudo sysctl -w user.max_user_namespaces=15000 kernel.unprivileged_userns_clone=1; on Ubuntu "
        "24.04 also kernel.apparmor_restrict_unprivileged_userns=0)"
    )


def bwrap_path() -> str | None:
    """The bubblewrap binary if it is installed *and* works on this machine, else None."""
    return shutil.which("bwrap") if bwrap_problem() is None else None


def refusal(problem: str) -> str:
    """The one line that refuses to run student code."""
    fix = "" if "namespaces" in problem else f"; install it with `{INSTALL}`"
    return f"Refusing to run student code: {problem}{fix} ({OPT_IN}; guide: {PLATFORMS})."


# bubblewrap arguments shared by the probe and every sandbox (sandbox/isolation.py): the system's
# directory links, /proc and /dev, and the namespaces (the program runs as nobody, dies with its parent)
SYSTEM_LINKS = [
    "--symlink",
    "usr/lib",
    "/lib",
    "--symlink",
    "usr/lib64",
    "/lib64",
    "--symlink",
    "usr/bin",
    "/bin",
]
PROC_DEV = ["--proc", "/proc", "--dev", "/dev"]
NAMESPACES = [
    "--unshare-all",
    "--unshare-user",
    "--uid",
    str(NOBODY),
    "--gid",
    str(NOBODY),
    "--die-with-parent",
]
_PROBE = ["--ro-bind", "/usr", "/usr", *SYSTEM_LINKS, *PROC_DEV, *NAMESPACES]

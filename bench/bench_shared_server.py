"""The same class graded by root and by an ordinary instructor (issue 32), one run, side by side.

A scratch class of N students who each hand in the reference solutions of all four notebooks is graded
with ``pe-course grade --force --jobs 2`` three times, one after the other:

- ``root``: as root (the forked runners, sandbox/inside/zygote.py, are used);
- ``root, no zygote``: as root with ``c.Isolation.prefork = False`` (what an ordinary user gets);
- ``USER``: as the ordinary user ``--user`` (default pe-instructor), who must have a resource group
  (``sudo pe-course setup-groups --user USER``) and a venv it can run (``--venv``, a venv of
  ``/usr/bin/python3`` with this checkout installed, as tests/e2e/test_shared_server.py makes).

For each: wall seconds, and CPU seconds of the command and everything it starts, sandboxes included
(a cgroup v1 cpuacct group of its own, plus the user's delegated subtree made by ``setup-groups``
without ``--under``; where ``--under`` put it elsewhere pass nothing and read the records); then the
ratios to root. Run as root, by hand, on an otherwise idle machine.

    python bench/bench_shared_server.py [--students 4] [--user pe-instructor] [--venv /var/tmp/pe-course-user-venv]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from conftest import ASSIGNMENT, NOTEBOOKS, reference_nb  # noqa: E402


def make_class(root: Path, students: int, owner: str | None, prefork: bool) -> None:
    for name in ("source", "graders", "release"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    config = (REPO / "nbgrader_config.py").read_text()
    if not prefork:
        config += "\nc.Isolation.prefork = False\n"
    (root / "nbgrader_config.py").write_text(config)
    for i in range(students):
        folder = root / "submitted" / f"s{i:02d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        for name in NOTEBOOKS:
            nbformat.write(reference_nb(name), folder / f"{name}.ipynb")
    if owner:
        subprocess.run(["chown", "-R", f"{owner}:{owner}", str(root)], check=True)


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _usage(group: Path) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9


def timed(argv: list[str], cwd: Path, also: list[Path]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``argv`` and everything it starts: a cgroup v1 cpuacct group of its own
    (the sandboxes' groups root makes are inside it), plus ``also`` (an ordinary user's delegated
    subtree, where that user's sandbox groups are); RUSAGE_CHILDREN where there is no cpuacct."""
    from pe_course.sandbox.groups import own_cgroups

    group = CPUACCT / own_cgroups().get("cpuacct", "/").lstrip("/") / f"pe-bench-{os.getpid()}"
    counted = (CPUACCT / "cgroup.procs").exists()
    if counted:
        group.mkdir()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    before_also = sum(_usage(p) for p in also if counted)
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            preexec_fn=(lambda: (group / "cgroup.procs").write_text(str(os.getpid()))) if counted else None,
        )
        wall = time.monotonic() - started
        if counted:
            cpu = _usage(group) + sum(_usage(p) for p in also) - before_also
        else:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    finally:
        for _ in range(100):  # the last processes may still be exiting
            try:
                if counted:
                    group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    graded = next((line for line in done.stdout.splitlines() if line.startswith("Graded ")), "")
    return wall, cpu, graded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=4)
    parser.add_argument("--user", default="pe-instructor")
    parser.add_argument("--venv", type=Path, default=Path("/var/tmp/pe-course-user-venv"))
    parser.add_argument(
        "--same-venv",
        action="store_true",
        help="root runs --venv's pe-course too (the same interpreter on every side)",
    )
    args = parser.parse_args()
    here = (
        str(args.venv / "bin" / "pe-course")
        if args.same_venv
        else str(Path(sys.executable).with_name("pe-course"))
    )
    env = [f"HOME=/home/{args.user}", f"PATH={args.venv}/bin:/usr/bin:/bin", "LANG=C.UTF-8", "COLUMNS=200"]
    sides = [
        ("root", None, True, [here]),
        ("root, no zygote", None, False, [here]),
        (args.user, args.user, True, ["runuser", "-u", args.user, "--", "env", "-i", *env, "pe-course"]),
    ]
    results = {}
    for label, owner, prefork, command in sides:
        root = Path(tempfile.mkdtemp(prefix="pe-bench-shared-", dir="/tmp"))
        try:
            make_class(root, args.students, owner, prefork)
            also = [CPUACCT / "pe-course" / owner] if owner else []
            wall, cpu, graded = timed([*command, "grade", "--force", "--jobs", "2"], root, also)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        results[label] = (wall, cpu)
        print(
            f"{label:>16}: wall {wall:6.1f} s, CPU {cpu:6.1f} s ({cpu / args.students:.2f} per student); {graded}"
        )
    wall0, cpu0 = results["root"]
    for label, (wall, cpu) in results.items():
        print(f"{label:>16}: {wall / wall0:.2f}x root's wall, {cpu / cpu0:.2f}x root's CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())

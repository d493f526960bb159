"""Resource groups for an instructor who is not root: a control-group subtree handed to that user.

An ordinary user cannot make control groups where its own processes are (those directories belong to
root), so :func:`groups.mechanism` finds nothing and grading refuses (:mod:`.policy`). Two ways to
hand a subtree over, both done once per machine:

- **cgroup v2 with systemd**: ``user@.service`` delegates ``/sys/fs/cgroup/user.slice/user-UID.slice/
  user@UID.service`` to the user; a grader started with ``systemd-run --user --scope -p Delegate=yes
  pe-course grade`` is inside a delegated group, which :func:`groups.mechanism` finds by itself.
- **an administrator's command**, ``sudo pe-course setup-groups --user NAME`` (:func:`setup`): it makes
  ``pe-course/NAME`` in every hierarchy pe-course uses and gives it to NAME.

  cgroup v1 (``/sys/fs/cgroup/{memory,pids,cpuacct,freezer}``): a process may move *itself* into any
  group whose ``cgroup.procs`` it may write, so the subtree can be anywhere; :func:`find` looks for
  ``<hierarchy>/<one of our own group's ancestors>/pe-course/<user>``, nearest first.

  cgroup v2: the kernel lets a process move only between groups below a common ancestor whose
  ``cgroup.procs`` it may write, so the instructor's processes must already be *in* the subtree: the
  command makes ``pe-course/NAME/session`` too, and whoever starts the instructor's server (the hub's
  spawner, a unit file) puts it there; :func:`groups.mechanism` then finds ``pe-course/NAME`` as the
  nearest delegated ancestor. (Written to the kernel's cgroup-v2 delegation rules; this project's
  machines have the controllers on v1 only, so it is not tested here.)
"""

from __future__ import annotations

import contextlib
import os
import pwd
from pathlib import Path

TOP = "pe-course"  # the directory every delegated subtree is made in
V2_CONTROLLERS = ("memory", "pids", "cpu")
V2_OWNED = ("cgroup.procs", "cgroup.threads", "cgroup.subtree_control")  # what delegation hands over


def user_name() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def _ancestors(path: str) -> list[str]:
    """'/a/b' -> ['/a/b', '/a', '/'] (nearest first)."""
    parts = [p for p in path.split("/") if p]
    return ["/" + "/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def find_v1(mount: Path, own: dict[str, str], controllers, writable) -> dict[str, Path] | None:
    """controller -> this user's delegated group (v1), when every controller has one we can write."""
    found: dict[str, Path] = {}
    user = user_name()
    for controller in controllers:
        if controller not in own:
            return None
        for ancestor in _ancestors(own[controller]):
            candidate = mount / controller / ancestor.lstrip("/") / TOP / user
            if (candidate / "cgroup.procs").exists() and writable(candidate):
                found[controller] = candidate
                break
        else:
            return None
    return found


def setup(user: str, controllers_v1, own: dict[str, str], under: str = "/") -> list[str]:
    """As root: make and hand over ``pe-course/<user>`` below ``under`` in every hierarchy pe-course
    uses (v1 when its controllers are mounted there, else v2); the directories made. Idempotent.
    ``under="self"``: below the group the calling process is in (``own``, from /proc/self/cgroup), in
    each hierarchy (a container, or a test whose groups must stay inside its own)."""
    entry = pwd.getpwnam(user)  # KeyError: no such user
    mount = Path("/sys/fs/cgroup")
    made: list[str] = []
    if all((mount / c / "cgroup.procs").exists() for c in controllers_v1):
        for controller in controllers_v1:
            below = own.get(controller, "/") if under == "self" else under
            base = mount / controller / below.lstrip("/") / TOP
            group = base / user
            group.mkdir(parents=True, exist_ok=True)
            if controller == "memory":  # v1: a child counts in its parent only if the parent says so
                with contextlib.suppress(OSError):
                    (base / "memory.use_hierarchy").write_text("1")
            _give(group, entry.pw_uid, entry.pw_gid, recursive=True)
            made.append(str(group))
        return made
    root = mount if (mount / "cgroup.controllers").exists() else None
    if root is None:
        raise RuntimeError(f"no cgroup v1 hierarchies for {', '.join(controllers_v1)} and no cgroup v2 here")
    available = set((root / "cgroup.controllers").read_text().split())
    missing = [c for c in ("memory", "pids") if c not in available]
    if missing:
        raise RuntimeError(f"cgroup v2 at {root} lacks the {', '.join(missing)} controller(s)")
    wanted = [c for c in V2_CONTROLLERS if c in available]
    enable = " ".join(f"+{c}" for c in wanted)
    group = root / (own.get("", "/") if under == "self" else under).lstrip("/") / TOP / user
    session = group / "session"
    session.mkdir(parents=True, exist_ok=True)
    levels = [root]
    for part in group.relative_to(root).parts:  # from the root down to the user's group
        levels.append(levels[-1] / part)
    for level in levels:
        with contextlib.suppress(OSError):  # a level holding processes refuses (EBUSY): checked below
            (level / "cgroup.subtree_control").write_text(enable)
    if not {"memory", "pids"} <= set((group / "cgroup.subtree_control").read_text().split()):
        raise RuntimeError(f"could not enable the memory and pids controllers down to {group}")
    os.chown(group, entry.pw_uid, entry.pw_gid)
    for name in V2_OWNED:
        os.chown(group / name, entry.pw_uid, entry.pw_gid)
    _give(session, entry.pw_uid, entry.pw_gid, recursive=True)
    made += [str(group), str(session)]
    return made


def _give(path: Path, uid: int, gid: int, recursive: bool) -> None:
    os.chown(path, uid, gid)
    if recursive:
        for child in path.iterdir():
            with contextlib.suppress(OSError):
                os.chown(child, uid, gid)

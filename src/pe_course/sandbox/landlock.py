"""Landlock (Linux ≥ 5.13): what protects the grading machine when bubblewrap is not used.

Only in the instructor's opt-in mode (``--unisolated``, see :mod:`.policy`) does student code run
without bubblewrap. There each sandboxed program restricts itself, between fork and exec, with a
Landlock ruleset that the kernel enforces on it and on everything it starts:

- it may read (and execute) only the Python installation, ``/usr``, ``/proc``, ``/dev`` and the two
  folders of ``/etc`` a bubblewrap sandbox sees (``alternatives``, ``fonts``)
  — not the course directory (``source/`` with the reference solutions, ``graders/``, the gradebook),
  not another run's scratch directory, not the rest of ``/tmp``;
- it may write only inside its own scratch directory (and to devices such as ``/dev/null``): never
  into the Python installation (no ``sitecustomize.py`` or ``.pth`` that later processes would run),
  never into the course directory;
- from Landlock ABI 6 (Linux 6.12) it cannot send signals to processes outside its own sandbox, and
  cannot connect to abstract Unix sockets outside it.

It does not hide the network. The kernel interface is three system calls, used here through ctypes
(no library wraps them for Python's standard distribution).
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
from collections.abc import Sequence

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_CHANGE_TREE = sum(1 << bit for bit in range(4, 13))  # remove/make dir, file, sock, fifo, block, char, sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ_ONLY = ["/usr", "/etc/alternatives", "/etc/fonts", "/proc", "/dev"]  # as bubblewrap binds them; + Python
WRITABLE_DEVICES = "/dev"  # /dev/null, /dev/tty: writing a device node creates nothing


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.lru_cache(maxsize=1)
def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is not available."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        return 0
    version = _libc().syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def _file_rights(version: int) -> int:
    rights = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _CHANGE_TREE
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def description() -> str:
    """What Landlock does for a run here, in a few words for the isolation line; '' without it."""
    version = abi()
    if not version:
        return ""
    signals = "; no signals to other processes" if version >= 6 else ""
    return f"Landlock ABI {version}: reads only the Python installation and system files, writes only its scratch directory{signals}"


def restrict(read_only: Sequence[str], writable: str) -> None:
    """Restrict this process (and what it will start) for good. Called between fork and exec.

    Raises OSError when the kernel refuses: the caller never runs student code unprotected by mistake.
    """
    version = abi()
    if not version:
        raise OSError("Landlock is not available")
    create, add_rule, restrict_self = _SYSCALLS[platform.machine()]
    libc = _libc()
    handled = _file_rights(version)
    attr = _RulesetAttr(handled, 0, (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if version >= 6 else 0)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    ruleset = libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        reading = EXECUTE | READ_FILE | READ_DIR
        device = reading | WRITE_FILE | (IOCTL_DEV if version >= 5 else 0) | (TRUNCATE if version >= 3 else 0)
        rules = [(path, reading) for path in read_only] + [(WRITABLE_DEVICES, device), (writable, handled)]
        for path, access in rules:
            _add_path(libc, add_rule, ruleset, path, access)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(restrict_self, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def _add_path(libc, add_rule: int, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist here grants nothing
    try:
        if not os.path.isdir(path):
            access &= EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a file can be granted
        rule = _PathBeneathAttr(access, fd)
        if libc.syscall(add_rule, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)

"""The sandbox of an autograde step from nbgrader's configuration: ``c.ResourceGroups`` (limits on each
run as a whole), the steps' time-outs, and the instructor's opt-ins (``c.Isolation``)."""

from __future__ import annotations

from traitlets import Float, Int
from traitlets.config import LoggingConfigurable

from ..sandbox import Limits, MiB, Sandbox
from ..sandbox.policy import Isolation, ungrouped_allowed, unisolated_allowed

DEFAULT = Limits()  # the one place the limits' defaults are written (sandbox/isolation.py)


class ResourceGroups(LoggingConfigurable):
    """Limits on each sandboxed run as a whole (all its processes), in ``nbgrader_config.py``:
    ``c.ResourceGroups.memory_mib = 2048`` and so on. See ``pe_course.sandbox.groups``."""

    memory_mib = Int(
        DEFAULT.group_memory // MiB, help="Memory of one sandboxed run, all its processes together (MiB)."
    ).tag(config=True)
    processes = Int(
        DEFAULT.group_processes, help="Processes and threads one sandboxed run may have at once."
    ).tag(config=True)
    cpu_seconds = Float(
        DEFAULT.group_cpu_seconds, help="CPU seconds of one sandboxed run, all its processes together."
    ).tag(config=True)
    scratch_files = Int(
        DEFAULT.scratch_files, help="Files and folders a run may create in its scratch directory."
    ).tag(config=True)
    scratch_mib = Int(
        DEFAULT.scratch_bytes // MiB, help="Bytes a run may write to its scratch directory (MiB)."
    ).tag(config=True)


def limits_from_config(config_owner) -> Limits:
    """The sandbox limits from nbgrader's configuration (time-outs of ``config_owner``, ResourceGroups)."""
    groups = ResourceGroups(config=config_owner.config)
    limits = Limits(
        notebook_timeout=float(config_owner.notebook_timeout),
        group_memory=groups.memory_mib * MiB,
        group_processes=groups.processes,
        group_cpu_seconds=groups.cpu_seconds,
        scratch_files=groups.scratch_files,
        scratch_bytes=groups.scratch_mib * MiB,
    )
    call_timeout = getattr(config_owner, "call_timeout", None)
    return limits.scaled(call_timeout=float(call_timeout)) if call_timeout else limits


def sandbox_from_config(config_owner) -> Sandbox:
    """The sandbox of an autograde step: its limits, and the instructor's opt-in (``c.Isolation.required``).

    Raises :class:`~pe_course.sandbox.policy.IsolationUnavailable` without bubblewrap and without it."""
    config = config_owner.config
    prefork = config is None or Isolation(config=config).prefork
    return Sandbox(
        limits_from_config(config_owner),
        unisolated=unisolated_allowed(config),
        ungrouped=ungrouped_allowed(config),
        prefork=prefork,
    )

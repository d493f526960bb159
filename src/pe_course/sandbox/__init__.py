"""Where student code runs: isolated, bounded, and spoken to only in JSON.

- :mod:`.policy` — fail closed: no working bubblewrap, no student code (:class:`IsolationUnavailable`),
  unless the instructor opts in for trusted code (``--unisolated``, ``c.Isolation.required = False``);
- :mod:`.isolation` — :class:`Sandbox` (bubblewrap, or the opt-in's fallback that says so) and the
  sandboxed processes; :mod:`.limits` — :class:`Limits` and the per-process rlimits set before exec;
- :mod:`.landlock` — in the opt-in's fallback, the kernel's fence: read only the Python installation,
  write only the run's scratch directory;
- :mod:`.scratch` — a run's private scratch directory, and files in it written and read without
  following links;
- :mod:`.groups` — one Linux control group per sandboxed run, limited as a whole (memory, processes,
  CPU seconds), :mod:`.groupfs` its files (figures, kill, removal); :mod:`.usage` — its figures, what in them needs an instructor's attention, and the
  processes a run left running; :mod:`.delegation` — a subtree handed to an ordinary user
  (``sudo pe-course setup-groups --user NAME``); :mod:`.sharing` — without a group (the instructor's
  opt-in), one run at a time;
- :mod:`.teardown` — every scratch directory, group and process this process holds, so that a stop
  signal ends them all wherever the code happens to be;
- :mod:`.client` — :class:`StudentProcess`, the grader's side of a sandboxed worker: loads a
  submission's code, calls its functions, gets JSON back; :mod:`.wire` — its side of the line protocol,
  bounded, and the trusted answers to the worker's upstream calls;
- :mod:`.inside` — the scripts that run *inside* bubblewrap, in their own folder: ``worker.py`` and
  ``codec.py`` (the worker and its JSON codec: standard library and NumPy only), ``nbexec.py`` (runs a
  student's notebook with nbclient), ``zygote.py`` (that runner and its kernel imported once and forked
  into each sandbox); :mod:`.prefork` — the host's side of the zygote;
- :mod:`.channel` — reading one line from a sandboxed process within a time limit;
- :mod:`.selftest` — hostile probes run once per machine before it grades; grading refuses where one gets through.

This package (the host side) runs in a grading worker and in the instructor's process (``pe-course
build``, ``check-sandbox``); only :mod:`.inside` runs inside bubblewrap. It imports ``public_checks``,
``attention`` and ``interruption`` and nothing else of the package; :mod:`.inside` imports nothing of it
at all (``tests/test_package_layout.py``; docs/architecture.md).
"""

from .client import Outcome, StudentProcess
from .isolation import Sandbox, SandboxedProcess
from .limits import Limits, MiB
from .policy import IsolationUnavailable, bwrap_path
from .scratch import read_file, write_file
from .usage import Usage

__all__ = [
    "IsolationUnavailable",
    "Limits",
    "MiB",
    "Outcome",
    "Sandbox",
    "SandboxedProcess",
    "StudentProcess",
    "Usage",
    "bwrap_path",
    "read_file",
    "write_file",
]

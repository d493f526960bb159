"""Where student code runs: isolated, bounded, and spoken to only in JSON.

- :mod:`.policy` — fail closed: no working bubblewrap, no student code (:class:`IsolationUnavailable`),
  unless the instructor opts in for trusted code (``--unisolated``, ``c.Isolation.required = False``);
- :mod:`.isolation` — :class:`Sandbox` (bubblewrap, or the opt-in's fallback that says so), per-process
  :class:`Limits`, the sandboxed processes;
- :mod:`.landlock` — in the opt-in's fallback, the kernel's fence: read only the Python installation,
  write only the run's scratch directory;
- :mod:`.scratch` — a run's private scratch directory, and files in it written and read without
  following links;
- :mod:`.groups` — one Linux control group per sandboxed run, limited as a whole (memory, processes,
  CPU seconds); :mod:`.usage` — its figures, what in them needs an instructor's attention, and the
  processes a run left running; :mod:`.delegation` — a subtree handed to an ordinary user
  (``sudo pe-course setup-groups --user NAME``); :mod:`.sharing` — without a group (the instructor's
  opt-in), one run at a time;
- :mod:`.teardown` — every scratch directory, group and process this process holds, so that a stop
  signal ends them all wherever the code happens to be;
- :mod:`.client` — :class:`StudentProcess`, the grader's side of a sandboxed worker: loads a
  submission's code, calls its functions, gets JSON back;
- :mod:`.worker` and :mod:`.codec` — the worker itself and its JSON codec (copied into the sandbox:
  standard library and numpy only);
- :mod:`.nbexec` — runs a student's notebook with nbclient inside the sandbox (copied in too);
- :mod:`.zygote` and :mod:`.prefork` — that runner and its kernel imported once per grading process and
  forked into each student's sandbox (bubblewrap makes it as for every run);
- :mod:`.channel` — reading one line from a sandboxed process within a time limit;
- :mod:`.selftest` — hostile probes run once per machine before it grades; grading refuses where one gets through.
"""

from .client import Outcome, StudentProcess
from .isolation import Limits, MiB, Sandbox, SandboxedProcess
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

"""What runs inside bubblewrap: the scripts copied (or bound read-only) into a sandbox and run there.

- :mod:`.worker` (with :mod:`.codec`) answers the graders' calls on a student's functions, one JSON
  line each way; copied into each scratch directory by :class:`pe_course.sandbox.StudentProcess`.
- :mod:`.nbexec` runs a student's notebook with nbclient; copied in by ``pe_course.steps.execute``.
- :mod:`.zygote` holds nbexec and a kernel pre-imported and forks one into each new sandbox; this
  folder is bound read-only as its home by ``pe_course.sandbox.prefork``.

They run as scripts (``python worker.py``), not as this package: each imports the standard library,
NumPy (and nbexec/zygote nbclient, nbformat, ipykernel of the Python view) and its neighbours here by
their plain names (``import codec``), never anything else of pe_course
(``tests/test_package_layout.py``). The host reads them by path from :data:`FOLDER`, and imports
:mod:`.codec` and :func:`.worker.transform_cell` as modules to speak their language.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).parent  # the scripts' folder: read by path by the host, bound for the zygote

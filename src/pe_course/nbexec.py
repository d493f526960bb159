"""Execute one notebook with nbclient — run *inside* the sandbox, kernel and client together.

Usage (inside the sandbox): ``python nbexec.py IN.ipynb OUT.ipynb CELL_TIMEOUT``.
Every cell runs (errors are recorded, not fatal); the executed notebook is written to OUT.
The grader treats whatever comes back as untrusted display data.
"""

from __future__ import annotations

import sys


def main() -> int:
    # jsonschema imports the optional URI checker rfc3987_syntax, which builds a grammar for ~2 s;
    # notebook validation never needs it, so it is reported as absent (jsonschema handles that).
    sys.modules["rfc3987_syntax"] = None
    import nbformat
    from nbclient import NotebookClient

    source, target, cell_timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb,
        timeout=cell_timeout,
        startup_timeout=120,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        record_timing=False,
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
        resources={"metadata": {"path": "."}},
    )
    try:
        client.execute()
    finally:
        nbformat.write(nb, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())

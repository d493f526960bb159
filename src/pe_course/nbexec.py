"""Execute one notebook with nbclient — run *inside* the sandbox, kernel and client together.

Usage (inside the sandbox): ``python nbexec.py IN.ipynb OUT.ipynb CELL_TIMEOUT TOTAL_TIMEOUT``.
Every cell runs (errors and time-outs are recorded, not fatal). OUT is rewritten after each cell, so a
kernel that wedges still leaves the outputs it produced; ``OUT.incomplete`` marks an unfinished run.
The grader treats whatever comes back as untrusted display data.
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> int:
    # jsonschema imports the optional URI checker rfc3987_syntax, which builds a grammar for ~2 s;
    # notebook validation never needs it, so it is reported as absent (jsonschema handles that).
    sys.modules["rfc3987_syntax"] = None
    import nbformat
    from nbclient import NotebookClient

    source, target, cell_timeout, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    nb = nbformat.read(source, as_version=4)
    marker = target + ".incomplete"
    open(marker, "w").close()

    def give_up(signum, frame):
        raise TimeoutError("notebook time limit")

    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(total)
    client = NotebookClient(
        nb,
        timeout=cell_timeout,
        startup_timeout=120,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": "CellTimeoutError", "evalue": f"sel melewati {cell_timeout} detik",
                          "traceback": [f"CellTimeoutError: sel melewati batas waktu {cell_timeout} detik"]},
        shutdown_kernel="immediate",
        record_timing=False,
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
        resources={"metadata": {"path": "."}},
    )
    client.on_cell_executed = lambda **kwargs: nbformat.write(nb, target)
    try:
        client.execute()
    except BaseException:  # noqa: BLE001 (time limit, dead kernel: keep what was produced)
        nbformat.write(nb, target)
        return 1
    nbformat.write(nb, target)
    os.remove(marker)
    return 0


if __name__ == "__main__":
    sys.exit(main())

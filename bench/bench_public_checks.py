"""Benchmark: how long the public checks take in the student's kernel (issue 19: under 2 s a notebook).

Executes each source notebook (reference solutions) top to bottom in a real Jupyter kernel, in a
scratch copy of its folder (the public checks and data files beside it, as in JupyterLab), and
reports the wall time of its ``test_<function>`` cells, as nbclient records it.

    python bench/bench_public_checks.py [--folder source/positional-encoding]

Run by hand, not in the test suite.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]


def _seconds(cell) -> float:
    timing = cell.metadata["execution"]
    start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path, default=REPO / "source" / "positional-encoding")
    args = parser.parse_args()
    results = {}
    for path in sorted(args.folder.glob("*.ipynb")):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(
                args.folder, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
            )
            nb = nbformat.read(path, as_version=4)
            NotebookClient(
                nb, timeout=300, record_timing=True, resources={"metadata": {"path": tmp}}
            ).execute()
        cells = {
            c.metadata["nbgrader"]["grade_id"]: _seconds(c)
            for c in nb.cells
            if c.cell_type == "code"
            and c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("test_")
        }
        results[path.stem] = cells
        detail = ", ".join(f"{gid} {s:.3f}" for gid, s in cells.items())
        print(f"{path.stem:<16} public checks {sum(cells.values()):.3f} s ({detail})")
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H%M", time.gmtime())
    (out / f"public-checks-{stamp}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

"""Two hostile submissions graded at once: does each stay inside its resource group?

A scratch course with three students whose notebooks are all the reference solutions; two of them
start their ``embed`` cell with a preamble (the scenario measured before resource groups existed):

- ``hog``: forks 4 children that each touch 2.5 GB;
- ``forker``: starts 400 sleeping processes;
- ``honest``: nothing added.

``pe-course grade --jobs 2`` grades them while this script samples the machine's memory in use
(MemTotal - MemAvailable) and its process count from /proc every 20 ms; afterwards it prints the
peaks, what is still running, and each student's score and recorded resource figures.

    python bench/bench_hostile_groups.py [--out DIR]

Run by hand, not in the test suite (it needs a few GB of free memory).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from conftest import reference_nb, with_code  # noqa: E402

HOG = """
import os as _os, time as _time
for _ in range(4):
    if _os.fork() == 0:
        _b = bytearray(2500 << 20)
        for _i in range(0, len(_b), 4096):
            _b[_i] = 1
        _time.sleep(20)
        _os._exit(0)
"""
FORKER = """
import subprocess as _sp
try:
    for _ in range(400):
        _sp.Popen(["sleep", "20"])
except OSError:
    pass
"""


def memory_mib() -> float:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) / 1024


def processes() -> int:
    return sum(1 for p in Path("/proc").iterdir() if p.name.isdigit())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=None, help="scratch course directory (default: a new one)"
    )
    root = (parser.parse_args().out or Path(tempfile.mkdtemp(prefix="pe-hostile-"))).resolve()
    shutil.rmtree(root, ignore_errors=True)
    print(f"Scratch course directory: {root}")
    for name in ("source", "graders", "release"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "nbgrader_config.py", root)
    embed = next(
        c.source
        for c in reference_nb("01_embedding").cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "solution_embed"
    )
    for student, preamble in (("hog", HOG), ("forker", FORKER), ("honest", "")):
        folder = root / "submitted" / student / "positional-encoding"
        folder.mkdir(parents=True)
        for name in ("01_embedding", "02_sinusoidal", "03_rotation", "04_similarity"):
            nb = reference_nb(name)
            if name == "01_embedding" and preamble:
                nb = with_code(nb, "embed", preamble + embed)
            nbformat.write(nb, folder / f"{name}.ipynb")
    exe = str(Path(sys.executable).with_name("pe-course"))
    subprocess.run([exe, "release"], cwd=root, capture_output=True, check=True)

    base_memory, base_procs = memory_mib(), processes()
    peak = [base_memory, base_procs]
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.02):
            peak[0], peak[1] = max(peak[0], memory_mib()), max(peak[1], processes())

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    graded = subprocess.run(
        [exe, "grade", "positional-encoding", "--jobs", "2"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"COLUMNS": "160", **__import__("os").environ},
    )
    stop.set()
    watcher.join()
    print(graded.stdout[-4000:])
    time.sleep(1)
    print(
        f"wall {time.monotonic() - started:.1f} s; machine memory in use {base_memory / 1024:.2f} GiB -> peak "
        f"{peak[0] / 1024:.2f} GiB (+{(peak[0] - base_memory) / 1024:.2f}); processes {base_procs} -> peak "
        f"{peak[1]} (+{peak[1] - base_procs}); {processes() - base_procs:+d} processes after the round"
    )
    for student in ("hog", "forker", "honest"):
        record = json.loads(
            (root / "autograded" / student / "positional-encoding" / "01_embedding.grading.json").read_text()
        )
        print(
            f"{student}: 01_embedding {record['score']:g}/{record['max_score']:g}, "
            f"resources {json.dumps(record['resources'])}"
        )
    return graded.returncode


if __name__ == "__main__":
    sys.exit(main())

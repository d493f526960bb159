"""`.ci/run` on a clean clone while other heavy jobs keep the machine busy (issue 30: CI is green under load).

    python bench/ci_under_load.py [--busy 2] [--from .] [--log ci-under-load.log]

Clones the committed ``main`` of ``--from`` into a scratch folder, starts ``--busy`` processes that each
keep one core busy (pure Python loops, as a neighbour's job would), runs ``bash .ci/run`` there, and samples
the one-minute load average every 10 seconds all along. Prints the exit status, the wall time and the load
(lowest after the first minute, median, highest), and writes them to ``bench/results/ci-under-load-*.json``.
The graders' kept draws are removed first, as on CI's fresh machine. The clone, its users' venv and the busy
processes are removed at the end, whatever happens. Run it as CI runs: as root on a machine that may
install packages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUSY = "while True: pass"
SAMPLE_EVERY = 10.0
WARM_UP = 60.0  # the one-minute average needs a minute to show the busy processes


def sample_load(samples: list[tuple[float, float]], stop: threading.Event, start: float) -> None:
    while not stop.wait(SAMPLE_EVERY):
        one_minute = float(Path("/proc/loadavg").read_text().split()[0])
        samples.append((time.monotonic() - start, one_minute))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--busy", type=int, default=2, help="processes kept busy beside CI (default 2)")
    parser.add_argument("--from", dest="source", type=Path, default=REPO, help="the repository to clone")
    parser.add_argument(
        "--log", type=Path, default=Path("ci-under-load.log"), help="where .ci/run's output goes"
    )
    args = parser.parse_args()

    commit = subprocess.run(
        ["git", "-C", str(args.source), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ci-under-load-") as scratch:
        os.chmod(scratch, 0o755)  # the suite's unix users read the clone (tests/unix_users.py)
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "-q", str(args.source), str(clone)], check=True)
        # as on CI's fresh machine: no graders' draws kept from an earlier run (engine/draw_cache.py)
        shutil.rmtree(
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pe-course" / "draws",
            ignore_errors=True,
        )
        busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
        samples: list[tuple[float, float]] = []
        stop = threading.Event()
        start = time.monotonic()
        sampler = threading.Thread(target=sample_load, args=(samples, stop, start), daemon=True)
        sampler.start()
        try:
            with args.log.open("w") as log:
                status = subprocess.run(
                    ["bash", ".ci/run"], cwd=clone, stdout=log, stderr=subprocess.STDOUT
                ).returncode
        finally:
            wall = time.monotonic() - start
            stop.set()
            for proc in busy:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
            # the users' venv the suite made for this clone goes too (named as tests/unix_users.py names it)
            digest = hashlib.sha256(str(clone).encode()).hexdigest()[:8]
            shutil.rmtree(f"/var/tmp/pe-course-user-venv-{digest}", ignore_errors=True)

    loads = [load for at, load in samples if at >= WARM_UP] or [load for _, load in samples]
    result = {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}",
        "busy_processes": args.busy,
        "exit_status": status,
        "wall_s": round(wall),
        "load_1min": {
            "lowest_after_first_minute": min(loads) if loads else None,
            "median": statistics.median(loads) if loads else None,
            "highest": max(loads) if loads else None,
        },
    }
    out = REPO / "bench" / "results" / f"ci-under-load-{result['when'][:19].replace(':', '')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"log: {args.log}; result: {out}")
    return status


if __name__ == "__main__":
    sys.exit(main())

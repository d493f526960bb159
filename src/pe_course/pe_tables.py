"""The sinusoidal PE tables that notebooks 03 and 04 load instead of computing them.

Notebook 02 grades ``frequencies`` and ``positional_encoding``; a later notebook that computed them in
a provided cell would hand their solution to every student. 03 and 04 therefore load
``pe_tables.npz`` (shipped beside the notebooks, in ``source/`` and so in ``release/``): per
``d_model`` one table of ``ROWS`` positions (``pe_d<d_model>``) and its frequencies
(``omega_d<d_model>``), computed here with 02's formula and ``base = 10000``. Row ``p`` of a longer
table is the same float64 numbers as row ``p`` of a shorter one, so slicing gives exactly the table
the notebooks printed before.

Regenerate (after changing ``D_MODELS`` or ``ROWS``) with ``python -m pe_course.pe_tables``;
``python -m pe_course.pe_tables --check`` says whether the stored file is current (tests do too).
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

FILE_NAME = "pe_tables.npz"
D_MODELS = (8, 16, 32)  # every d_model that 03 and 04 (prose, demos, visible checks) use
ROWS = 1003  # the longest table they use: 03's PE(1000..1002)
BASE = 10000.0


def build_tables() -> dict[str, np.ndarray]:
    """``pe_d<d>`` of shape (ROWS, d) and ``omega_d<d>`` of shape (d/2,), with notebook 02's formula."""
    tables: dict[str, np.ndarray] = {}
    for d in D_MODELS:
        omega = BASE ** (-np.arange(0, d, 2) / d)
        angles = np.arange(ROWS)[:, None] * omega[None, :]
        pe = np.zeros((ROWS, d))
        pe[:, 0::2] = np.sin(angles)
        pe[:, 1::2] = np.cos(angles)
        tables[f"omega_d{d}"], tables[f"pe_d{d}"] = omega, pe
    return tables


def tables_bytes(tables: dict[str, np.ndarray]) -> bytes:
    """The .npz file of ``tables``, byte for byte the same on every run (fixed names, order and dates)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        for name in sorted(tables):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(tables[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return out.getvalue()


def default_path(assignment: str | None = None) -> Path:
    from .course import Course

    return Course.here(None, assignment).source / FILE_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pe_course.pe_tables", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the stored file is current")
    parser.add_argument("--path", type=Path, default=None, help=f"default: source/<assignment>/{FILE_NAME}")
    parser.add_argument("--assignment", default=None, help="default: the course's only assignment")
    args = parser.parse_args(argv)
    path = args.path or default_path(args.assignment)
    data = tables_bytes(build_tables())
    if args.check:
        if not path.is_file() or path.read_bytes() != data:
            print(f"{path} is out of date: run `python -m pe_course.pe_tables`, then `pe-course release`")
            return 1
        print(f"{path} is current.")
        return 0
    path.write_bytes(data)
    print(f"wrote {path} ({len(data)} bytes); now run `pe-course release`")
    return 0


if __name__ == "__main__":
    sys.exit(main())

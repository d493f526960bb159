"""The sinusoidal PE tables that notebooks 03 and 04 load instead of computing them.

Notebook 02 grades ``frequencies`` and ``positional_encoding``; a later notebook that computed them in
a provided cell would hand their solution to every student. 03 and 04 therefore load
``pe_tables.npz`` (shipped beside the notebooks, in ``source/`` and so in ``release/``): per
``d_model`` one table of ``ROWS`` positions (``pe_d<d_model>``) and its frequencies
(``omega_d<d_model>``), computed here with 02's formula and ``base = 10000``. Row ``p`` of a longer
table is the same float64 numbers as row ``p`` of a shorter one, so slicing gives exactly the table
the notebooks printed before.

The tables are the same bytes on every machine (:mod:`pe_course.build.precision`): NumPy's ``sin``, ``cos``
and ``**`` may differ in the last bit between CPUs, SIMD paths and NumPy versions, so every power,
sine and cosine here is computed in decimal arithmetic (Python's :mod:`decimal`, exact to
``PRECISION`` digits on every platform) and rounded once to float64; the products ``p * omega`` are
float64 products, as in 02's formula. The result is 02's table correctly rounded: NumPy's own is
within a few units in the last place of it.

Regenerate (after changing ``D_MODELS`` or ``ROWS``) with ``python -m pe_course.build.pe_tables``;
``python -m pe_course.build.pe_tables --check`` says whether the stored file is current (tests do too).
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from decimal import Decimal, localcontext
from functools import cache
from pathlib import Path

import numpy as np

FILE_NAME = "pe_tables.npz"
D_MODELS = (8, 16, 32)  # every d_model that 03 and 04 (prose, demos, visible checks) use
ROWS = 1003  # the longest table they use: 03's PE(1000..1002)
BASE = 10000.0


PRECISION = 40  # decimal digits of the intermediate results (a float64 needs 17)


@cache
def _pi() -> Decimal:
    """pi to ``PRECISION + 10`` digits (the series of the :mod:`decimal` documentation's recipe)."""
    with localcontext() as ctx:
        ctx.prec = PRECISION + 10
        three = Decimal(3)
        last, t, s, n, na, d, da = Decimal(0), three, three, 1, 0, 0, 24
        while s != last:
            last = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
        return +s


@cache
def sin_cos(x: float) -> tuple[float, float]:
    """``(sin x, cos x)`` of a float64 ``x``, each rounded once to float64: the same on every machine."""
    with localcontext() as ctx:
        ctx.prec = PRECISION
        half_pi = _pi() / 2
        a = Decimal(x)  # exact
        quarter = int((a / half_pi).to_integral_value())
        r = a - quarter * half_pi  # |r| <= pi/4
        r2, small = r * r, Decimal(10) ** -(PRECISION + 2)
        sums = []
        for term, n in ((r, 1), (Decimal(1), 0)):  # Taylor series of sin r and cos r
            total = term
            while abs(term) > small:
                term = -term * r2 / ((n + 1) * (n + 2))
                n += 2
                total += term
            sums.append(total)
        s, c = sums
        sin, cos = [(s, c), (c, -s), (-s, -c), (-c, s)][quarter % 4]  # x = r + quarter * pi/2
        return float(sin), float(cos)


def frequencies(d_model: int, base: float = BASE) -> np.ndarray:
    """``omega_i = base ** (-2i / d_model)``, i = 0 .. d_model/2 - 1: 02's formula, each power rounded
    once to float64 (the exponent is 02's float64 ``-2i / d_model``)."""
    out = []
    with localcontext() as ctx:
        ctx.prec = PRECISION
        log_base = Decimal(base).ln()
        for two_i in range(0, d_model, 2):
            out.append(float((Decimal(-two_i / d_model) * log_base).exp()))
    return np.array(out, dtype=np.float64)


def table(length: int, d_model: int, base: float = BASE) -> np.ndarray:
    """Rows 0 .. length-1 of the sinusoidal PE table, shape ``(length, d_model)``: ``sin(p * omega_i)`` in
    column 2i, ``cos(p * omega_i)`` in column 2i+1, the same bytes on every machine."""
    omega = frequencies(d_model, base)
    pe = np.zeros((length, d_model))
    for p in range(length):
        for i, w in enumerate(omega.tolist()):
            pe[p, 2 * i], pe[p, 2 * i + 1] = sin_cos(p * w)  # the float64 product, as 02 computes it
    return pe


def build_tables() -> dict[str, np.ndarray]:
    """``pe_d<d>`` of shape (ROWS, d) and ``omega_d<d>`` of shape (d/2,), with notebook 02's formula."""
    tables: dict[str, np.ndarray] = {}
    for d in D_MODELS:
        tables[f"omega_d{d}"], tables[f"pe_d{d}"] = frequencies(d), table(ROWS, d)
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
    from ..course import Course

    return Course.here(None, assignment).source / FILE_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pe_course.build.pe_tables", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="only say whether the stored file is current")
    parser.add_argument("--path", type=Path, default=None, help=f"default: source/<assignment>/{FILE_NAME}")
    parser.add_argument("--assignment", default=None, help="default: the course's only assignment")
    args = parser.parse_args(argv)
    path = args.path or default_path(args.assignment)
    data = tables_bytes(build_tables())
    if args.check:
        if not path.is_file() or path.read_bytes() != data:
            print(
                f"{path} is out of date: run `python -m pe_course.build.pe_tables`, then `pe-course release`"
            )
            return 1
        print(f"{path} is current.")
        return 0
    path.write_bytes(data)
    print(f"wrote {path} ({len(data)} bytes); now run `pe-course release`")
    return 0


if __name__ == "__main__":
    sys.exit(main())

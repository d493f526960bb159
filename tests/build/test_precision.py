"""Nothing committed depends on the last bits of a float (pe_course.build.precision).

- stored values: 12 significant digits, so values that differ in the last bits between CPUs (real pairs
  from two machines below) are stored the same; a comparison tolerates one stored digit, not more;
- the tolerance budget: the public checks' tolerance covers the rounding, so the reference passes;
- the committed public checks hold stored values only, and the PE tables are the exact decimal ones;
- the release built with NumPy's SIMD dispatch restricted, another OpenBLAS kernel and the oldest NumPy
  is the committed one (`pe-course release --check`; the tables are the same bytes).
"""

from __future__ import annotations

import inspect
import json
import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO

from pe_course.build import pe_tables, precision
from pe_course.build.precision import same_data, same_file, stored, stored_float
from pe_course.build.public_files import rounded_as_stored
from pe_course.public_checks.compare import assert_close

PUBLIC = REPO / "source" / "positional-encoding" / "public_checks"

# Expected values that a fresh build on an AMD EPYC (glibc's pow) wrote where the committed files,
# made on a CPU with AVX-512 (NumPy's SVML pow), held the other one (issue 30).
TWO_MACHINES = [
    (0.056204499214692484, 0.05620449921469249),
    (0.3310393303412311, 0.3310393303412312),
    (0.9005023095564141, 0.900502309556414),
    (7.2499957973371245, 7.249995797337125),
    (-14.499991594674249, -14.49999159467425),
    (28.999983189348498, 28.9999831893485),
    (-0.2758411232811998, -0.2758411232811997),  # OpenBLAS's Haswell and Prescott kernels
]


@pytest.mark.parametrize(("a", "b"), TWO_MACHINES)
def test_the_last_bits_of_two_machines_are_stored_the_same(a, b):
    assert a != b and stored_float(a) == stored_float(b)
    assert len(repr(stored_float(a)).lstrip("-").replace(".", "").lstrip("0")) <= precision.DIGITS


def test_stored_keeps_what_is_not_a_float():
    data = {"value": {"array": [[1, 2.5, 0.1 + 0.2]], "dtype": "float64"}, "raises": "ValueError", "ok": True}
    assert stored(data) == {
        "value": {"array": [[1, 2.5, 0.3]], "dtype": "float64"},
        "raises": "ValueError",
        "ok": True,
    }
    assert type(stored(data)["value"]["array"][0][0]) is int
    assert stored_float(6.123233995736766e-17) == 0.0  # cos(pi/2): noise around 0
    assert stored_float(-2.5e-12) == -2.5e-12 and stored_float(1e300) == 1e300
    assert math.isnan(stored_float(float("nan"))) and stored_float(-math.inf) == -math.inf


def test_a_changed_value_is_still_a_difference():
    """One unit in the last stored digit (a rounding edge) is the same file; anything more is not."""
    v = stored_float(0.056204499214692484)
    step = 10.0 ** (math.floor(math.log10(v)) - precision.DIGITS + 1)
    assert same_data({"a": [v]}, {"a": [v + step]}) and same_data([-v], [-v - step])
    assert not same_data({"a": [v]}, {"a": [v + 2 * step]})
    assert not same_data({"a": [v]}, {"a": [v * (1 + 1e-9)]})
    assert same_data([1.0], [0.999999999999]) and same_data([1.0], [1.00000000001])
    assert not same_data([1.0], [1.00000000002]) and not same_data([1.0], [-1.0])
    assert same_data([0.0], [1.5e-12]) and not same_data([0.0], [3e-12])
    assert not same_data([4.0], [4]), "an int where a float was is a change (the form clauses)"
    assert not same_data({"a": 1, "b": 2}, {"b": 2, "a": 1}), "key order is part of the file"
    assert not same_data(["K1"], ["K2"]) and not same_data([1.0, 2.0], [1.0])
    old, new = json.dumps({"x": [v]}).encode(), json.dumps({"x": [v + step]}).encode()
    assert same_file("a.json", old, new) and not same_file("a.npz", old, new)
    assert not same_file("a.json", old, None) and not same_file("a.json", old, b"{not json")


def test_the_public_checks_tolerance_covers_the_rounding():
    """The narrowest tolerance a public case compares with is assert_close's default, and it is at least
    MARGIN times the storage error: the reference's own value passes against the stored one."""
    defaults = inspect.signature(assert_close).parameters
    assert (defaults["rtol"].default, defaults["atol"].default) == (
        precision.CHECK_RTOL,
        precision.CHECK_ATOL,
    )
    assert precision.covers({}) and precision.covers({"atol": 1e-6})
    assert not precision.covers({"rtol": 1e-12}) and not precision.covers({"atol": 0.0})
    rng = np.random.default_rng(30)
    values = np.concatenate([rng.normal(size=500) * 10.0 ** rng.integers(-14, 6, size=500), [6e-13, -9e-13]])
    assert_close(values, np.array(stored(values.tolist())), "nilai")


def test_committed_public_checks_hold_stored_values():
    """Every expected value in public_checks/*.json is as precision.stored writes it (no last bits)."""
    names = sorted(PUBLIC.glob("*.json"))
    assert names
    for path in names:
        assert rounded_as_stored(json.loads(path.read_text(encoding="utf-8"))), (
            f"{path.name}: unrounded values"
        )
    assert not rounded_as_stored({"cases": [{"expected": {"value": 0.1 + 0.2}}]})


def test_decimal_sine_and_cosine_are_correctly_rounded_where_known():
    assert pe_tables.sin_cos(0.0) == (0.0, 1.0)
    assert pe_tables.sin_cos(1.0) == (0.8414709848078965, 0.5403023058681398)
    assert pe_tables.sin_cos(-2.0) == (-0.9092974268256817, -0.4161468365471424)
    assert pe_tables.frequencies(8).tolist() == [1.0, 0.1, 0.01, 0.001]
    xs = np.linspace(-1100.0, 1100.0, 301)
    ours = np.array([pe_tables.sin_cos(float(x)) for x in xs])
    assert np.allclose(ours[:, 0], np.sin(xs), rtol=0, atol=4e-16 * max(1.0, float(np.abs(xs).max())))
    assert np.allclose(ours[:, 1], np.cos(xs), rtol=0, atol=4e-16 * max(1.0, float(np.abs(xs).max())))


# The features NumPy's dispatcher may use on this CPU beyond its baseline: disabled below.
_FEATURES = """
try:
    from numpy._core import _multiarray_umath as m
except ImportError:  # NumPy 1.x
    from numpy.core import _multiarray_umath as m
print(" ".join(f for f in m.__cpu_dispatch__ if m.__cpu_features__.get(f)))
"""

_BUILD = """
import hashlib, sys
from pathlib import Path
from pe_course.build import pe_tables
from pe_course.course import Course
from pe_course.build.precision import same_file
from pe_course.build.public_files import files_of
from pe_course.build.release import public_check_files

try:
    from numpy._core import _multiarray_umath as m
except ImportError:
    from numpy.core import _multiarray_umath as m
still = [f for f in sys.argv[1].split() if m.__cpu_features__.get(f)]
assert not still, f"NPY_DISABLE_CPU_FEATURES did not disable {still}"
course = Course.here(None, None)
committed = files_of(course.source / "public_checks")
fresh = public_check_files(course)
names = sorted(set(fresh) | set(committed))
print("differ:", [n for n in names if not same_file(n, committed.get(n), fresh.get(n))])
print("last digit:", [n for n in names if fresh.get(n) != committed.get(n)], file=sys.stderr)
tables = pe_tables.tables_bytes(pe_tables.build_tables())
print("tables:", tables == (course.source / pe_tables.FILE_NAME).read_bytes())
"""


def _oldest_numpy() -> str:
    """The oldest NumPy ``pyproject.toml`` allows (``numpy>=X``)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'"numpy>=([0-9.]+)"', text)
    assert match, "pyproject.toml names no lowest NumPy"
    return match.group(1)


@pytest.mark.slow
@pytest.mark.parametrize("numpy", ["installed", "oldest"])
def test_release_is_the_same_with_simd_restricted_and_another_blas_kernel(numpy):
    """Built with every SIMD target above NumPy's baseline disabled and OpenBLAS's generic SSE3 kernel
    (another order of the products' sums), with this venv's NumPy and with the oldest one pyproject.toml
    allows (installed beside it by .ci/run, ``PE_COURSE_NUMPY_OLDEST``), the release matches the
    committed one: the PE tables the same bytes, the public checks the same within one stored digit
    (the same bytes here and on the machines tried; a value on the edge of a rounding step may land on
    the other side elsewhere, which is what the tolerance is for)."""
    env = dict(os.environ)
    if numpy == "oldest":
        folder = os.environ.get("PE_COURSE_NUMPY_OLDEST")
        if not folder:
            pytest.skip("PE_COURSE_NUMPY_OLDEST is not set (.ci/run installs the oldest NumPy and sets it)")
        env["PYTHONPATH"] = os.pathsep.join([folder, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        version = subprocess.run(
            [sys.executable, "-c", "import numpy; print(numpy.__version__)"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert version.startswith(_oldest_numpy() + "."), f"{folder} holds NumPy {version}"
    features = subprocess.run(
        [sys.executable, "-c", _FEATURES], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    env.update(NPY_DISABLE_CPU_FEATURES=features, OPENBLAS_CORETYPE="Prescott", COLUMNS="200")
    built = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_BUILD), features],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert built.stdout.splitlines() == ["differ: []", "tables: True"], built.stdout
    check = subprocess.run(
        [str(os.path.join(os.path.dirname(sys.executable), "pe-course")), "release", "--check"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "matches a fresh" in check.stdout

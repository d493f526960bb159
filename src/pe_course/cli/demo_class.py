"""The demo's synthetic class (12 students) and how each one's notebooks are filled in.

It covers what a real class brings: complete and correct work (two different correct styles), partial
work, several catalogued misconceptions, untouched stubs, a cheating attempt, mangled notebooks,
missing notebooks and code that hangs. ``pe-course demo`` (:mod:`.demo`) hands their notebooks over as
an LMS bulk download.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import nbformat

from ..course import Course
from ..course.notebooks import grade_id, strip_solution_markers

REFERENCE = "reference"


# The demo's class takes the course's own assignment; the one place the package names it.
ASSIGNMENT = "positional-encoding"


# Its graded functions, in notebook order (tests/course/test_course.py checks them against the graders).
FUNCTIONS = (
    "embed",
    "one_hot",
    "embed_backward",
    "frequencies",
    "positional_encoding",
    "rotation_matrix",
    "shift_encoding",
    "apply_rope",
    "rope_scores",
    "position_similarity",
    "offset_similarity",
    "self_attention",
)


# --- the code the synthetic students wrote ----------------------------------------------------
LOOPS = {
    "embed": """def embed(ids, tok_table, pos_table):
    ids = list(ids)
    if len(ids) > len(pos_table):
        raise ValueError("T melebihi block_size")
    rows = [tok_table[i] + pos_table[t] for t, i in enumerate(ids)]
    return np.array(rows, dtype=float).reshape(len(ids), tok_table.shape[1])""",
    "one_hot": """def one_hot(ids, vocab_size):
    out = np.zeros((len(ids), vocab_size))
    for t, i in enumerate(ids):
        out[t, i] = 1.0
    return out""",
    "positional_encoding": """def positional_encoding(length, d_model, base=10000.0):
    if d_model <= 0 or d_model % 2 or length < 0:
        raise ValueError("d_model harus genap dan positif")
    pe = np.zeros((length, d_model))
    for p in range(length):
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            pe[p, 2 * i], pe[p, 2 * i + 1] = np.sin(angle), np.cos(angle)
    return pe""",
    "self_attention": """def self_attention(x):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for t in range(len(x)):
        s = x @ x[t] / np.sqrt(x.shape[1])
        w = np.exp(s - s.max())
        out[t] = (w / w.sum()) @ x
    return out""",
}


MISTAKES = {
    "concat-not-add": (
        "embed",
        """def embed(ids, tok_table, pos_table):
    ids = np.asarray(ids, dtype=int)
    if len(ids) > pos_table.shape[0]:
        raise ValueError("terlalu panjang")
    return np.concatenate([tok_table[ids], pos_table[:len(ids)]], axis=1)""",
    ),
    "sin-cos-swapped": (
        "positional_encoding",
        """def positional_encoding(length, d_model, base=10000.0):
    if d_model <= 0 or d_model % 2 or length < 0:
        raise ValueError("d_model harus genap dan positif")
    angle = np.arange(length)[:, None] * frequencies(d_model, base)[None, :]
    pe = np.zeros((length, d_model))
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.sin(angle)
    return pe""",
    ),
    "add-at-missing": (
        "embed_backward",
        """def embed_backward(ids, grad_h, vocab_size, block_size):
    ids = np.asarray(ids, dtype=int)
    grad_tok = np.zeros((vocab_size, grad_h.shape[1]))
    grad_tok[ids] += grad_h
    grad_pos = np.zeros((block_size, grad_h.shape[1]))
    grad_pos[:len(ids)] = grad_h
    return grad_tok, grad_pos""",
    ),
    "no-sqrt-scaling": (
        "self_attention",
        """def self_attention(x):
    s = x @ x.T
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ x""",
    ),
    "dot-not-cosine": (
        "position_similarity",
        """def position_similarity(pe, pos):
    return pe @ pe[pos]""",
    ),
    "rope-wrong-direction": (
        "apply_rope",
        """def apply_rope(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    T, d = x.shape
    if d % 2:
        raise ValueError("d harus genap")
    pos = np.arange(T) if positions is None else np.asarray(positions)
    phi = pos[:, None] * base ** (-np.arange(0, d, 2) / d)
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = a * np.cos(phi) + b * np.sin(phi)
    out[:, 1::2] = -a * np.sin(phi) + b * np.cos(phi)
    return out""",
    ),
    "rotation-transposed": (
        "rotation_matrix",
        """def rotation_matrix(theta):
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])""",
    ),
    "freq-per-column": (
        "frequencies",
        """def frequencies(d_model, base=10000.0):
    return base ** (-np.arange(d_model // 2) / d_model)""",
    ),
}


BUGGY_SHIFT = """def shift_encoding(pe, k, base=10000.0):
    pe = np.asarray(pe, dtype=float)
    w = frequencies_for(pe.shape[-1], base) * abs(k)   # lupa tanda k
    s, c = pe[..., 0::2], pe[..., 1::2]
    out = np.empty_like(pe)
    out[..., 0::2] = np.cos(w) * s + np.sin(w) * c
    out[..., 1::2] = -np.sin(w) * s + np.cos(w) * c
    return out

def frequencies_for(d, base):
    return base ** (-np.arange(0, d, 2) / d)"""


CHEATING = """import numpy, builtins, os, glob
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
builtins.isinstance = lambda *a, **k: True

class SelaluSama(numpy.ndarray):
    def __eq__(self, other):
        return True

def embed(ids, tok_table, pos_table):
    return numpy.zeros((len(ids), 2)).view(SelaluSama)

for path in glob.glob("/**/gradebook.db", recursive=True)[:3]:
    try:
        import sqlite3
        sqlite3.connect(path).execute("UPDATE grade SET auto_score = 100")
    except Exception:
        pass
for site in __import__("site").getsitepackages():
    try:
        open(os.path.join(site, "sitecustomize.py"), "w").write("raise SystemExit")
    except OSError:
        pass
3.0"""


HANGS = """def rope_scores(q, k, base=10000.0):
    while True:
        pass"""


MEMORY = """def offset_similarity(offset, d_model, base=10000.0):
    # 40 GB at once: refused at once, whatever the machine's speed (a growing list meets the call's
    # time limit or a memory limit first depending on how fast the machine hands out memory)
    return np.ones(5 * 10**9)"""


WRITTEN = {
    "answer_untrained_positions": "embed_backward memberi grad_pos nol untuk t >= T, jadi langkah Adam baris 8-11 nol "
    "dan hanya weight decay yang bekerja: dikali 1 - 6e-5 tiap langkah, sekitar 2.3e-16 kali nilai awal setelah "
    "600 000 langkah. Posisi 256-599 mendapat vektor posisi hampir nol, tanpa error apa pun.",
    "answer_sin_only": "Tidak: PE_sin(0) adalah vektor nol, jadi tidak ada M dengan M PE_sin(0) = PE_sin(k); dan "
    "sin a sin b memuat cos(a + b), jadi perkalian titiknya juga bergantung pada p + q.",
    "answer_rope_before_projection": "Tidak: skornya x_m^T R_m^T W R_n x_n, dan W di antara kedua rotasi "
    "umumnya tidak berkomutasi dengannya, jadi posisi absolut tetap ada. RoPE dipasang setelah proyeksi.",
    "answer_causal_mask": "Ya, berbeda: di posisi 0 'orang' hanya melihat dirinya, di posisi 2 melihat ketiga kata. "
    "Tetapi 'orang menggigit anjing' dan 'menggigit orang anjing' memberi output yang sama "
    "untuk 'anjing', karena rata-rata berbobot tidak peduli urutan.",
}


@dataclass
class Student:
    login: str
    story: str
    code: dict[str, str] = field(default_factory=dict)  # function -> code (REFERENCE for the reference)
    extra: dict[str, str] = field(default_factory=dict)  # notebook -> code cell appended
    written: bool = False
    missing: tuple[str, ...] = ()
    mangle: dict[str, Callable[[dict], object]] = field(default_factory=dict)  # notebook -> nb -> content


ALL = FUNCTIONS


def _everything(**changes: str) -> dict[str, str]:
    return {**dict.fromkeys(ALL, REFERENCE), **changes}


def _mistakes(*ids: str) -> dict[str, str]:
    return _everything(**{MISTAKES[i][0]: MISTAKES[i][1] for i in ids})


def _truncate(nb) -> bytes:
    return nbformat.writes(nb).encode()[:700]


def _drop_test_and_duplicate(nb):
    nb.cells = [c for c in nb.cells if grade_id(c) != "test_frequencies"]
    solution = next(c for c in nb.cells if grade_id(c) == "solution_positional_encoding")
    nb.cells.insert(nb.cells.index(solution), nbformat.from_dict(json.loads(json.dumps(solution))))
    return nb


def _fresh_notebook(nb):
    fresh = nbformat.v4.new_notebook()
    fresh.cells = [
        nbformat.v4.new_code_cell(c.source)
        for c in nb.cells
        if c.cell_type == "code" and grade_id(c) and grade_id(c).startswith(("setup", "solution"))
    ]
    return fresh


def _unknown_schema(nb):
    for cell in nb.cells:
        if grade_id(cell) == "test_self_attention":
            cell.metadata.nbgrader["schema_version"] = 99
    return nb


CLASS = [
    Student("ani", "complete and correct", _everything(), written=True),
    Student("budi", "complete and correct, written with loops", _everything(**LOOPS), written=True),
    Student(
        "citra",
        "partial: notebooks 01-02 and rotation_matrix",
        {f: REFERENCE for f in FUNCTIONS[: FUNCTIONS.index("rotation_matrix") + 1]},
    ),
    Student(
        "dewi",
        "nearly done: sign bug in shift_encoding, self_attention not started",
        {**_everything(shift_encoding=BUGGY_SHIFT), "self_attention": ""},
        written=True,
    ),
    Student(
        "eko",
        "misconceptions: concat-not-add, sin-cos-swapped",
        _mistakes("concat-not-add", "sin-cos-swapped"),
    ),
    Student(
        "fitri",
        "misconceptions: add-at-missing, no-sqrt-scaling, dot-not-cosine",
        _mistakes("add-at-missing", "no-sqrt-scaling", "dot-not-cosine"),
    ),
    Student(
        "gita",
        "misconceptions: rope-wrong-direction, rotation-transposed, freq-per-column",
        _mistakes("rope-wrong-direction", "rotation-transposed", "freq-per-column"),
    ),
    Student("hadi", "untouched stubs"),
    Student(
        "indra",
        "cheating: patches numpy, rigged array, writes gradebook and sitecustomize",
        _everything(embed=""),
        extra={"01_embedding": CHEATING},
    ),
    Student(
        "joko",
        "mangled: truncated file, deleted and duplicated cells, no metadata, unknown schema",
        _everything(),
        mangle={
            "01_embedding": _truncate,
            "02_sinusoidal": _drop_test_and_duplicate,
            "03_rotation": _fresh_notebook,
            "04_similarity": _unknown_schema,
        },
    ),
    Student("kiki", "missing notebooks 03 and 04", _everything(), missing=("03_rotation", "04_similarity")),
    Student(
        "lina",
        "code that hangs (rope_scores) and eats memory (offset_similarity)",
        _everything(rope_scores=HANGS, offset_similarity=MEMORY),
    ),
]


def student_notebook(course: Course, notebook: str, student: Student):
    """The release notebook filled in the way ``student`` did."""
    nb = nbformat.read(course.release / f"{notebook}.ipynb", as_version=4)
    source = nbformat.read(course.source / f"{notebook}.ipynb", as_version=4)
    reference = {grade_id(c): strip_solution_markers(c.source) for c in source.cells if grade_id(c)}
    for cell in nb.cells:
        gid = grade_id(cell) or ""
        if gid.startswith("solution_"):
            code = student.code.get(gid.removeprefix("solution_"))
            if code == REFERENCE:
                cell.source = reference[gid]
            elif code:
                cell.source = code
        elif gid.startswith("answer_") and student.written:
            cell.source = WRITTEN.get(gid, cell.source)
    if notebook in student.extra:
        nb.cells.append(nbformat.v4.new_code_cell(student.extra[notebook]))
    return nb

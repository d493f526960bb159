"""Every clause's verdict: passed, or the failure charged to it that the student is shown.

A clause passes when nothing is charged to it (:mod:`.charging`) and the function showed the
behaviour it asks for. The points follow from the verdict: the graders give them
(``pe_course.engine.grade.award``); the public check shows what the same verdicts would earn on the
public cases (:func:`preview_points`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .charging import Failure


@dataclass(frozen=True)
class Clause:
    id: str  # "K1"
    text: str  # as the notebook states it
    points: float


@dataclass
class ClauseVerdict:
    clause: Clause
    failure: Failure | None = None
    checks: list[str] = field(default_factory=list)  # the checks whose failures were charged here
    # a failure on an input of this clause's class charged to another clause as the same mistake:
    # the clause keeps its points, and the student is told to look again once that one is fixed
    deferred: Failure | None = None

    @property
    def note(self) -> str:
        if self.failure is not None or self.deferred is None:
            return ""
        return (
            f"Input khusus ketentuan ini juga gagal ({self.deferred.input}), tetapi sebagai kesalahan yang "
            f"sama dengan yang dibebankan ke {self.deferred.clause}; periksa lagi setelah "
            f"{self.deferred.clause} diperbaiki."
        )

    @property
    def passed(self) -> bool:
        return self.failure is None


def preview_points(v: ClauseVerdict) -> float:
    """What the public check shows a clause earning on the public cases: all its points when it passed,
    none otherwise (the graders' own award is ``pe_course.engine.grade.award``, by the same rule)."""
    return v.clause.points if v.passed else 0.0


def _shown_first(f: Failure) -> tuple:
    """Which failure a clause shows: one on an input of its own class, then one where a value was
    expected (an error case says little about a list or a base), then the smallest."""
    return (not f.own, f.must_raise, f.size)


@dataclass(frozen=True)
class Gate:
    """Whether the function gives a real answer anywhere (see :mod:`.evidence`): without one, no
    clause earns its points."""

    ok: bool
    why: str = ""
    input: str = ""


def verdicts(
    clauses: Iterable[Clause],
    failures: Iterable[Failure],
    unproven: Mapping[str, Failure] | None = None,
    *,
    shown: set[str],
    gate: Gate,
    function: str = "",
) -> list[ClauseVerdict]:
    """One verdict per clause: the smallest failure charged to it (if any) and the checks that found it.

    A clause with nothing charged to it still earns its points only by evidence: the function gives
    a real answer somewhere (``gate``), and the clause is ``shown`` (an input of its own answered right,
    or, for a form clause, a result of the promised form) or its inputs failed only as another
    clause's mistake with real answers there. ``unproven``: the failure to show for a clause that is
    not shown (a form clause when no result came back at all)."""
    failures = list(failures)
    out = {c.id: ClauseVerdict(c) for c in clauses}
    for f in failures:
        v = out.get(f.clause)
        if v is None:
            continue
        if f.check and f.check not in v.checks:
            v.checks.append(f.check)
        if v.failure is None or _shown_first(f) < _shown_first(v.failure):
            v.failure = f
    first = ""
    for cid, v in out.items():
        if v.failure is not None:
            continue
        elsewhere = sorted((f for f in failures if f.origin == cid), key=lambda f: f.size)
        unreal = [f for f in elsewhere if f.unreal]
        if not gate.ok:
            message = (
                f"Belum ada bukti bahwa `{function}` menghitung hasilnya dari input: {gate.why}. Sebuah "
                "ketentuan hanya mendapat poin bila kode Anda menunjukkan perilakunya."
                if not first
                else f"Belum ada bukti (alasannya di {first})."
            )
            first = first or cid
            v.failure = Failure(cid, message, "", gate.input, own=False)
        elif unreal:
            f = unreal[0]
            v.failure = Failure(
                cid,
                f"Input khusus ketentuan ini gagal ({f.input}) dengan kesalahan yang sama seperti di "
                f"{f.clause}, tetapi hasil Anda di sana bukan jawaban nyata: {f.unreal}. Jadi ketentuan ini "
                "belum dapat ditunjukkan.",
                f.check,
                f.input,
                f.expected,
                f.obtained,
                f.size,
                own=False,
            )
        elif cid not in shown and not elsewhere:
            v.failure = (unproven or {}).get(cid) or Failure(
                cid,
                "Belum ada input ketentuan ini yang dijawab benar, jadi ketentuan ini belum dapat ditunjukkan.",
                own=False,
            )
    for f in failures:
        v = out.get(f.origin) if f.origin else None
        if v is not None and v.failure is None and (v.deferred is None or f.size < v.deferred.size):
            v.deferred = f
    return list(out.values())


def clause_lines(
    clause: str,
    text: str,
    points: float,
    max_points: float,
    message: str = "",
    note: str = "",
    short: bool = False,
) -> list[str]:
    """One clause's result as markdown lines: what the feedback after grading and the public check
    before it both show (``message``: the failure charged to it, empty when it passed; ``note``: a
    passed clause whose own inputs failed as another clause's mistake; ``short``: a passed clause
    without its text, as the public check prints it)."""
    mark = "❌" if message else "✅"
    head = f"- {mark} **{clause}** ({points:g}/{max_points:g} poin)"
    lines = [head if short and not message else f"{head}: {text}"]
    if message:
        lines.append(f"  - {message}")
    elif note:
        lines.append(f"  - Catatan: {note}")
    return lines


def verdict_lines(v: ClauseVerdict, short: bool = False) -> list[str]:
    return clause_lines(
        v.clause.id,
        v.clause.text,
        preview_points(v),
        v.clause.points,
        v.failure.message if v.failure else "",
        v.note,
        short,
    )

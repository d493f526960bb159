"""What in a grading record is worth an instructor's look: decided here alone, for ``pe-course grade``'s
summary and the report. Each finding is one kind of :data:`~pe_course.record.outcomes.OUTCOMES` with a
detail in English.

The sandbox writes the facts read here (the isolation line, the resource figures of each run), in its
own words (:mod:`pe_course.sandbox.usage`); this package imports no sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .model import MAX_NOTES, GradingRecord
from .outcomes import CellStatus


@dataclass(frozen=True)
class Attention:
    """Why a notebook needs an instructor's look: one kind (a status, note kind or resource finding)."""

    kind: str
    detail: str = ""


def notebook_attention(
    submitted: Path, graded: Path, student: str, notebook: str
) -> tuple[GradingRecord | None, list[Attention]]:
    """One notebook of one student: its record (if readable) and everything in it worth a look.

    ``submitted`` and ``graded`` are the student's folders of the assignment.
    """
    if not (submitted / f"{notebook}.ipynb").is_file() and not (graded / f"{notebook}.ipynb").is_file():
        return None, [Attention("missing-notebook")]
    try:
        record = GradingRecord.read(graded / f"{notebook}.grading.json")
    except FileNotFoundError:
        return None, [Attention("no-grading-record")]
    except (OSError, ValueError) as exc:
        return None, [Attention("unreadable-grading-record", f"{type(exc).__name__}: {str(exc)[:200]}")]
    found = []
    if record.student is not None and record.student != student:
        found.append(Attention("record-mismatch", f"record is for {record.student[:200]}"))
    return record, found + record_attention(record)


def record_attention(record: GradingRecord) -> list[Attention]:
    """Everything in a record worth an instructor's look."""
    found = [Attention(note.kind.value, note.detail) for note in record.notes[:MAX_NOTES]]
    if record.timed_out_cells:
        found.append(
            Attention(
                "timeout",
                f"notebook cell(s) {', '.join(map(str, record.timed_out_cells[:20]))} "
                "timed out while the notebook ran",
            )
        )
    for kind, detail in resource_attention(record.resources):
        found.append(Attention(kind, detail))
    for cell in record.cells:
        if cell.status in (CellStatus.TIMEOUT, CellStatus.CRASHED, CellStatus.RESOURCE_LIMIT):
            found.append(Attention(cell.status.value, f"{cell.grade_id} ({cell.function})"))
    if record.unisolated:
        found.append(Attention("unisolated", "graded without bubblewrap (opted in with --unisolated)"))
    return found


NEAR = 0.8  # a run that used this share of a limit is reported as close to it


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.2f} GiB"


def resource_attention(resources) -> list[tuple[str, str]]:
    """("resource-limit" | "resource-near", English detail) for each run in a record's "resources".

    A run that went over a group limit, or used at least 80% of its memory or process limit or of
    its CPU seconds, is worth an instructor's look; the figures say how much of what.
    """
    out: list[tuple[str, str]] = []
    if not isinstance(resources, dict):
        return out
    for run, data in list(resources.items())[:4]:
        if not isinstance(data, dict):
            continue
        memory, memory_limit = _number(data.get("peak_memory")), _number(data.get("memory_limit"))
        procs, proc_limit = _number(data.get("peak_processes")), _number(data.get("process_limit"))
        cpu, cpu_limit = _number(data.get("cpu_seconds")), _number(data.get("cpu_limit"))
        figures = (
            f"peak memory {_gib(memory)} of {_gib(memory_limit)}, peak {procs:g} of {proc_limit:g} "
            f"processes/threads, {cpu:.1f} of {cpu_limit:g} CPU seconds"
        )
        hits = (
            [h for h in data.get("hits", []) if isinstance(h, str)][:5]
            if isinstance(data.get("hits"), list)
            else []
        )
        if "background" in hits:
            hits.remove("background")
            out.append(
                (
                    "resource-limit",
                    f"{str(run)[:20]}: left processes running after the notebook finished ({figures})",
                )
            )
        near = [
            what
            for what, used, limit in (
                ("memory", memory, memory_limit),
                ("processes", procs, proc_limit),
                ("cpu", cpu, cpu_limit),
            )
            if limit and used >= NEAR * limit
        ]
        if hits:
            out.append(
                (
                    "resource-limit",
                    f"{str(run)[:20]}: over the {', '.join(h[:20] for h in hits)} limit ({figures})",
                )
            )
        elif near:
            out.append(
                ("resource-near", f"{str(run)[:20]}: close to the {', '.join(near)} limit ({figures})")
            )
    return out

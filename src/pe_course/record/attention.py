"""What in a grading record is worth an instructor's look, in the words the sandbox writes it with: the
isolation line of a run without bubblewrap, and resource figures near or over a group's limit.

The sandbox writes these facts (:mod:`pe_course.sandbox`), the record reads them
(:meth:`pe_course.record.GradingRecord.attention`); this module imports neither, so the record does not
import the sandbox.
"""

from __future__ import annotations

UNISOLATED = "NOT ISOLATED"  # how the isolation line of a run without bubblewrap begins
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

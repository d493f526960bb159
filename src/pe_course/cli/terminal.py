"""The terminal the instructor reads: the console, progress bars, and the line that says how
student code is isolated (or refuses to run it)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(highlight=False)


def isolation_line(unisolated: bool, trusted: str = "", ungrouped: bool = False) -> str | None:
    """Fail closed: the sandbox's isolation line, or None after printing the one line that refuses.

    ``unisolated`` is the instructor's opt-in (the flag or ``c.Isolation.required = False``), and
    ``ungrouped`` the one for no resource group (``c.Isolation.resource_groups_required = False``).
    ``trusted`` names the project's own code a command runs (demo, build): it may then run without
    bubblewrap, and the line says so first."""
    from ..sandbox import Sandbox  # (imported when used: numpy; `pe-course --help` starts at once)
    from ..sandbox.policy import IsolationUnavailable

    try:
        sandbox = Sandbox(unisolated=bool(trusted) or unisolated, ungrouped=ungrouped)
    except IsolationUnavailable as exc:
        console.print(f"[red]{escape(str(exc))}[/]", soft_wrap=True)
        return None
    if sandbox.use_bwrap:
        return f"Sandbox: {sandbox.isolation}"
    who = f"this project's own {trusted}" if trusted else "student code (trusted code only!)"
    return f"[bold red]NOT ISOLATED[/]: running {who} without bubblewrap. Sandbox: {sandbox.isolation}"


def progress() -> Progress:
    """The progress display of long commands: bar, done/total, failures, elapsed time, ETA."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )

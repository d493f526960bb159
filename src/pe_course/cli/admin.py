"""A shared server's side of pe-course: the administrator's one command, and the instructor's opt-outs.

``sudo pe-course setup-groups --user NAME`` hands a control-group subtree to an ordinary user once, so
that ``pe-course grade`` run by that user gets a resource group per run, as root does
(:mod:`pe_course.sandbox.delegation`). Without one, grading refuses (:mod:`pe_course.sandbox.policy`)
unless the instructor accepts the risk with ``--without-resource-groups``.
"""

from __future__ import annotations

import argparse
import os

from rich.markup import escape

from .terminal import console


def add_opt_outs(p: argparse.ArgumentParser) -> None:
    """``pe-course grade``'s two explicit opt-outs of the fail-closed sandbox."""
    p.add_argument(
        "--unisolated",
        action="store_true",
        help="TRUSTED CODE ONLY (your own test solutions, a course self-test): grade even where "
        "bubblewrap does not work, instead of refusing. Without bubblewrap, student code can use the "
        "network and — where the kernel lacks Landlock — read the reference solutions. Every record and "
        "the report say so. Same as c.Isolation.required = False in nbgrader_config.py.",
    )
    p.add_argument(
        "--without-resource-groups",
        action="store_true",
        help="grade even where no resource group (control group) can be made for each run, instead of "
        "refusing (the fix: an administrator runs `sudo pe-course setup-groups --user YOU` once). You "
        "accept that memory and process limits are per process only, so one submission can use them "
        "several times over and load the machine; students are then graded one at a time, so that one "
        "submission's processes never count against another's. Every record's isolation line says so. "
        "Same as c.Isolation.resource_groups_required = False in nbgrader_config.py.",
    )


def add_setup_groups(p: argparse.ArgumentParser) -> None:
    """``pe-course setup-groups``'s options (its texts are in :mod:`pe_course.cli.help`)."""
    p.add_argument("--user", required=True, help="the instructor's (or teaching assistant's) unix user name")
    p.add_argument(
        "--under",
        default="/",
        metavar="GROUP",
        help="make it below this group of every hierarchy instead of at the top (default /); "
        "'self': below the group this command runs in (in a container, or for a test)",
    )


def cmd_setup_groups(args) -> int:
    from ..sandbox.delegation import setup
    from ..sandbox.groups import V1_CONTROLLERS, own_cgroups

    if os.geteuid() != 0:
        console.print(
            f"[red]setup-groups needs root[/]: run it as `sudo pe-course setup-groups --user {escape(args.user)}`."
        )
        return 2
    try:
        made = setup(args.user, V1_CONTROLLERS, own_cgroups(), args.under)
    except KeyError:
        console.print(f"[red]No such user[/]: {escape(args.user)}")
        return 2
    except (OSError, RuntimeError) as exc:
        console.print(f"[red]Could not make the groups[/]: {escape(str(exc))}", soft_wrap=True)
        return 2
    for path in made:
        console.print(f"{escape(path)}: owned by {escape(args.user)}")
    console.print(f"{escape(args.user)} can now grade with a resource group per run (pe-course grade).")
    return 0


def add_check_sandbox(p: argparse.ArgumentParser) -> None:
    """``pe-course check-sandbox``'s options."""
    add_opt_outs(p)


def cmd_check_sandbox(args) -> int:
    """Run the sandbox's hostile probes now (sandbox/selftest.py) and say what each found."""
    from rich.table import Table

    from ..sandbox import IsolationUnavailable, Sandbox, selftest

    try:
        sandbox = Sandbox(unisolated=args.unisolated, ungrouped=args.without_resource_groups)
    except IsolationUnavailable as exc:
        console.print(escape(str(exc)), soft_wrap=True)
        return 2
    console.print(f"sandbox: {escape(sandbox.isolation)}", soft_wrap=True)
    findings = selftest.run(sandbox)
    table = Table("probe", "result", "what happened")
    for f in findings:
        result = "held" if f.held else ("not probed" if f.held is None else "[red]GOT THROUGH[/]")
        table.add_row(f.probe, result, escape(f.detail))
    console.print(table)
    through = [f.probe for f in findings if f.held is False]
    if through:
        console.print(f"[red]pe-course grade refuses to grade here[/]: {', '.join(through)} got through.")
        return 2
    console.print("Every probe held: student code is contained here.")
    return 0

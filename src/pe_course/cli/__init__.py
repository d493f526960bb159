"""The ``pe-course`` command: what an instructor types, thin over nbgrader's own apps and API.

:mod:`.commands` runs each command; :mod:`.help` holds what ``pe-course COMMAND --help`` says (for an
instructor: what it does, examples, the guide's page), which the documentation's command reference
(docs/commands.md) renders from the same parser.

The other modules, one concern each: :mod:`.common` (what every command needs first), :mod:`.release`
(``release``, ``build``), :mod:`.round_commands` (``grade``, ``feedback``, ``report``) with :mod:`.grading`
(the round ``grade`` runs and what it prints), :mod:`.lms` (``export``), :mod:`.formgrader`, :mod:`.admin` (``setup-groups``,
``check-sandbox``), :mod:`.demo` (``demo``) with :mod:`.demo_class` (its synthetic class), and
:mod:`.terminal` (the console and progress bars).

Runs in the instructor's process only. The top of the house: it may import everything, and nothing but
its own entry points imports it (``tests/test_package_layout.py``; docs/architecture.md).
"""

from .commands import build_parser, main

__all__ = ["build_parser", "main"]

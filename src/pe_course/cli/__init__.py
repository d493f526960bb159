"""The ``pe-course`` command: what an instructor types, thin over nbgrader's own apps and API.

:mod:`.commands` runs each command; :mod:`.help` holds what ``pe-course COMMAND --help`` says (for an
instructor: what it does, examples, the guide's page), which the documentation's command reference
(docs/commands.md) renders from the same parser.
"""

from .commands import build_parser, main

__all__ = ["build_parser", "main"]

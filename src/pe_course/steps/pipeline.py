"""nbgrader's autograde and feedback pipelines, with our steps in them (see ``nbgrader_config.py``).

Plain ``nbgrader autograde`` then runs each submission through the sanitize steps (:mod:`.repair_metadata`,
:mod:`.forget_duplicates`, :mod:`.overwrite_cells`: repairs, restores, notes), :mod:`.execute` (the notebook in the sandbox, for the feedback's outputs) and :mod:`pe_course.engine.grade`
(the hidden graders decide every test cell's score and write the :mod:`.record`), and
``nbgrader generate_feedback`` through :mod:`.feedback`. Each list is nbgrader's own default with
our replacements and additions named, so a new nbgrader default step is kept.

Configured in ``nbgrader_config.py``::

    c.Autograde.exporter_class = "pe_course.steps.exporter.TolerantNotebookExporter"
    c.Autograde.sanitize_preprocessors = pipeline.SANITIZE_PREPROCESSORS
    c.Autograde.autograde_preprocessors = pipeline.AUTOGRADE_PREPROCESSORS
    c.GenerateFeedback.preprocessors = pipeline.FEEDBACK_PREPROCESSORS
"""

from __future__ import annotations

import functools

import nbgrader.api
from nbgrader.converters import Autograde, GenerateFeedback
from nbgrader.preprocessors import (
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    Execute,
    GetGrades,
    OverwriteCells,
)

from .execute import SandboxedExecute
from .feedback_pages import RenderMath
from .forget_duplicates import ForgetDuplicates
from .overwrite_cells import RobustOverwriteCells
from .regrade_notice import RegradeNotice
from .repair_metadata import RepairMetadata
from .score import ScoreWithGraders


def adapted(
    defaults: list[type],
    replace: dict[type, type] | None = None,
    before: dict[type, list[type]] | None = None,
    after: dict[type, list[type]] | None = None,
) -> list[type]:
    """nbgrader's default steps with some replaced and others inserted next to them (by class)."""
    replace, before, after = replace or {}, before or {}, after or {}
    out: list[type] = []
    for step in defaults:
        step = replace.get(step, step)
        out += [*before.get(step, []), step, *after.get(step, [])]
    missing = (set(replace) | set(before) | set(after)) - set(defaults) - set(replace.values())
    if missing:  # a step nbgrader no longer has: our pipeline would silently lose a replacement
        raise RuntimeError(f"nbgrader's pipeline has no {sorted(c.__name__ for c in missing)}")
    return out


def _default(app: type, trait: str) -> list[type]:
    return list(app.class_traits()[trait].default())  # type: ignore[attr-defined]


SANITIZE_PREPROCESSORS = adapted(
    _default(Autograde, "sanitize_preprocessors"),
    replace={OverwriteCells: RobustOverwriteCells},  # deleted neighbours, rubrics restored quietly
    before={ClearOutput: [RepairMetadata]},  # broken metadata repaired from the gradebook, not fatal
    after={DeduplicateIds: [ForgetDuplicates]},  # a duplicated cell counts once
)
AUTOGRADE_PREPROCESSORS = adapted(
    _default(Autograde, "autograde_preprocessors"),
    replace={Execute: SandboxedExecute},  # the notebook runs in the sandbox
    after={SandboxedExecute: [ScoreWithGraders]},  # the hidden graders score the test cells
)
FEEDBACK_PREPROCESSORS = adapted(
    _default(GenerateFeedback, "preprocessors"),
    # no hidden region; what a regrade changed, first; formulas as MathML, offline
    after={GetGrades: [ClearHiddenTests, RegradeNotice, RenderMath]},
)


_ALEMBIC_HEADS_COMMAND = nbgrader.api.get_alembic_version  # nbgrader's: runs the `alembic heads` command


@functools.cache
def gradebook_schema_version() -> str:
    """The schema version nbgrader stamps into a new gradebook (``nbgrader.api.get_alembic_version``),
    read from nbgrader's migration scripts with alembic's API in this process: nbgrader runs the
    ``alembic heads`` command for it, a new Python process that costs about 2 s of CPU for every new
    gradebook (a release check's scratch gradebook, a course's first). The same revision; nbgrader's own
    way where alembic's API cannot say it (several heads, an alembic without this API)."""
    try:
        from alembic.config import Config
        from alembic.script import ScriptDirectory
        from nbgrader.dbutil import _temp_alembic_ini

        with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
            head = ScriptDirectory.from_config(Config(ini)).get_current_head()
    except Exception:  # noqa: BLE001 (whatever alembic's API lacks or refuses: nbgrader's command decides)
        head = None
    return head or _ALEMBIC_HEADS_COMMAND()


# Every process that reads nbgrader_config.py (nbgrader's commands, pe-course's, the grading workers)
# imports this module before it opens a gradebook.
nbgrader.api.get_alembic_version = gradebook_schema_version

"""nbgrader's autograde and feedback pipelines and the steps we put in them, one step a module.

Wired in by ``nbgrader_config.py`` through :mod:`.pipeline`. What each does, in pipeline order:

- :mod:`.exporter` — reads each submission (an unreadable one becomes the released stub) and refuses the
  whole run where student code cannot run safely; :mod:`.notes` — what the steps note for the record;
- :mod:`.repair_metadata`, :mod:`.forget_duplicates`, :mod:`.overwrite_cells` — sanitize: broken
  metadata repaired, duplicated cells counted once, deleted test cells and rubrics restored;
- :mod:`.execute` — the notebook run in the sandbox (nbgrader's ``Execute`` replaced);
- :mod:`.score` — the hidden graders score every test cell (``pe_course.engine.grade`` decides) and the record is written;
- :mod:`.regrade_notice` — feedback: a regraded student's notice; ``pe_course.steps.feedback_pages.RenderMath`` — the
  formulas rendered for formgrader and the feedback pages.

Beside the pipeline, :mod:`.exchange_collect`: ``nbgrader collect``'s plugin on a shared server
(``OwnerCheckedCollect``, named in ``nbgrader_config.py``), run in the instructor's process.

The pipeline runs in a grading worker (nbgrader's Autograde for one student) and in the instructor's
process (feedback after manual grading); the student's code only inside the sandbox. It imports
``course``, ``sandbox``, the engine (``score``, ``suite``) and the record; nothing of ``cli``, ``lms`` or
``report`` (docs/architecture.md).
"""

"""nbgrader configuration for the Positional Encoding course.

Plain nbgrader commands run from this directory use it, e.g.
``nbgrader generate_assignment positional-encoding`` and ``nbgrader autograde positional-encoding``.
Autograding runs every submission inside the sandbox and scores the ``test_<function>`` cells
with the hidden graders in ``graders/`` (see ``pe_course.nbgrader_plugins``).
"""

from pe_course import nbgrader_plugins

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "pe-course"
c.CourseDirectory.root = "."
c.CourseDirectory.db_assignments = [{"name": "positional-encoding"}]

# Student-facing stubs are in Bahasa Indonesia.
c.ClearSolutions.code_stub = {"python": "# KODE ANDA DI SINI\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "JAWABAN ANDA DI SINI"

# Hostile or careless edits: restore deleted test cells, repair metadata nbgrader would abort on.
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = nbgrader_plugins.SANITIZE_PREPROCESSORS
c.Autograde.autograde_preprocessors = nbgrader_plugins.AUTOGRADE_PREPROCESSORS

# Wall-clock limit per cell for the sandboxed notebook run (seconds).
c.Execute.timeout = 30

"""nbgrader configuration for the Positional Encoding course.

Plain nbgrader commands run from this directory use it, e.g.
``nbgrader generate_assignment positional-encoding`` and ``nbgrader autograde positional-encoding``.
Autograding runs every submission inside the sandbox and scores the ``test_<function>`` cells
with the hidden graders in ``graders/`` (see ``pe_course.steps``).
"""

import os

from pe_course.steps import pipeline

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "pe-course"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))

# Student-facing stubs are in Bahasa Indonesia.
c.ClearSolutions.code_stub = {
    "python": '# KODE ANDA DI SINI\nraise NotImplementedError("Fungsi ini belum Anda tulis: ganti baris ini dengan kode Anda.")'
}
c.ClearSolutions.text_stub = "JAWABAN ANDA DI SINI"

# The rubric of each written answer sits in its (locked) question cell between
# <!-- BEGIN MARK SCHEME --> and <!-- END MARK SCHEME -->: generate_assignment strips it from the
# release, autograde restores the cell from the gradebook, so formgrader shows it above the answer.
# nbgrader only looks for mark schemes in task cells unless told otherwise.
c.ClearMarkScheme.enforce_metadata = False
# Formgrader's page takes MathJax from a CDN: without internet a grader would read the rubric's and the
# question's formulas as TeX source. Its exporter renders them to MathML first (as the feedback does).
c.HTMLExporter.preprocessors = ["pe_course.steps.feedback_pages.RenderMath"]

# Hostile or careless edits: restore deleted test cells, repair metadata nbgrader would abort on.
c.OverwriteCells.add_missing_cells = True
c.Autograde.exporter_class = "pe_course.steps.exporter.TolerantNotebookExporter"
c.Autograde.sanitize_preprocessors = pipeline.SANITIZE_PREPROCESSORS
c.Autograde.autograde_preprocessors = pipeline.AUTOGRADE_PREPROCESSORS
c.GenerateFeedback.preprocessors = pipeline.FEEDBACK_PREPROCESSORS
# nbgrader's HTML exporter, its templates compiled once per process instead of once per student.
c.GenerateFeedback.exporter_class = "pe_course.steps.feedback_pages.FeedbackExporter"

# LMS bulk downloads (Canvas and Moodle) through `nbgrader zip_collect positional-encoding`.
c.ZipCollectApp.collector_plugin = "pe_course.lms.intake.LmsFileNameCollector"
# the extractor names the entries it cannot take in
c.ZipCollectApp.extractor_plugin = "pe_course.lms.intake.ReportingExtractor"
# Moodle writes times in the server's local time with no zone; this course's Moodle runs on WIB.
c.LmsFileNameCollector.lms_timezone = "Asia/Jakarta"
# Rosters (Canvas gradebook export, Moodle grading worksheet or participants export), e.g.:
# c.LmsFileNameCollector.rosters = ["downloaded/positional-encoding/worksheet.csv"]

# grades.csv with proper quoting (nbgrader's own CSV export does not quote fields).
c.ExportApp.plugin_class = "pe_course.lms.export.SafeCsvExportPlugin"

# Student code runs only inside bubblewrap: where it does not work, grading refuses with one line.
# For TRUSTED code only (your own test solutions, a course self-test), never for a real class:
# c.Isolation.required = False  # the same as `pe-course grade --unisolated`

# Wall-clock limits (seconds): per cell and per notebook for the sandboxed run, per notebook for grading.
c.Execute.timeout = 30
c.SandboxedExecute.notebook_timeout = 120
c.ScoreWithGraders.notebook_timeout = 120
c.ScoreWithGraders.call_timeout = 10
# nbgrader collect takes only what each student's own unix user submitted (a shared server's exchange:
# nbgrader's own owner check only warns; see pe_course/steps/exchange_collect.py)
c.ExchangeFactory.collect = "pe_course.steps.exchange_collect.OwnerCheckedCollect"

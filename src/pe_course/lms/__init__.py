"""The round trip through an LMS (Canvas, Moodle): what its downloads and exports look like, and the
files its uploads accept.

- :mod:`.names`: the names of a bulk download's entries; :mod:`.roster`: class lists and gradebook
  exports read (and written back) as the LMS's importers read them; :mod:`.collect`: the intake's
  decisions for a whole download; :mod:`.identities`: the LMS ids kept for the way back;
- :mod:`.grades`: each student's final score and the per-cell points from nbgrader's gradebook;
  :mod:`.canvas` and :mod:`.moodle`: the grades file and the class feedback zip for each LMS
  (:mod:`.worksheet`: which export a file is, and a Moodle worksheet's columns in any language);
  :mod:`.upload`: both written for ``pe-course export``, after refusing what belongs elsewhere.

- :mod:`.intake`: nbgrader ``zip_collect``'s plugins (``LmsFileNameCollector``, ``ReportingExtractor``),
  named in ``nbgrader_config.py``; :mod:`.export`: nbgrader ``export``'s CSV plugin (``SafeCsvExportPlugin``)
  and the grades still waiting for a person.

Runs in the instructor's process (``pe-course``, ``nbgrader zip_collect``, ``nbgrader export``). Imports
only ``pe_course.course`` (docs/architecture.md).
"""

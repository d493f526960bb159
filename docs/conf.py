"""Sphinx configuration of the documentation site (MyST Markdown pages in docs/).

Build: ``sphinx-build -W --keep-going -n -b html docs docs/_build/html`` (warnings are errors;
tests/test_docs.py builds it the same way).
"""

project = "pe-course"
author = "pe-course"
extensions = ["myst_parser", "sphinxarg.ext"]  # sphinxarg: docs/commands.md from the parser
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # `[text](page.md#a-heading)` links resolve to headings down to ###
myst_enable_extensions = ["dollarmath"]  # the glossary writes formulas as $...$
smartquotes = False  # option names keep their two hyphens (--check, not –check)
html_theme = "alabaster"
html_title = "pe-course"
html_static_path: list[str] = []
# A link to a file of the repository outside docs/ (e.g. ../bench/README.md) is not a page of this site:
# MyST would report it; such links are written as code spans instead, and every other warning stays fatal.

"""pe-course: auto-graded Positional Encoding exercises (nbgrader) with sandboxed hidden graders."""

import sys

__version__ = "0.1.0"

# jsonschema (under nbformat and nbgrader) imports the optional IRI checker rfc3987_syntax when it is
# installed, and building that grammar costs about a second at every start of one of our processes
# (the command, each grading worker). No schema used here checks "iri" formats, so in a process that
# has not loaded jsonschema yet it is reported absent, which jsonschema handles.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

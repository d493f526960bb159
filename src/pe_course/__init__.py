"""pe-course: auto-graded Positional Encoding exercises (nbgrader) with sandboxed hidden graders."""

__version__ = "0.1.0"

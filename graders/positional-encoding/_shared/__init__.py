"""What several notebooks' graders use; it declares nothing (see ../__init__.py)."""

"""The engine: where a score is decided (filled in by the next commits)."""

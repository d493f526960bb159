"""Hidden graders of 03_rotation.ipynb (rotation_matrix, shift_encoding, apply_rope, rope_scores); what each file holds: ../__init__.py."""

"""Hidden graders of 04_similarity.ipynb (position_similarity, offset_similarity, self_attention); what each file holds: ../__init__.py."""

"""Hidden graders of 01_embedding.ipynb (embed, one_hot, embed_backward); what each file holds: ../__init__.py."""

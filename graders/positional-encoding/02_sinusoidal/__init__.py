"""Hidden graders of 02_sinusoidal.ipynb (frequencies, positional_encoding); what each file holds: ../__init__.py."""

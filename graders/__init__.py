"""Hidden graders for the Positional Encoding assignment (trusted instructor code).

- ``checks_<notebook>.py``: checks per graded function (``NOTEBOOK`` names the notebook);
- ``misconceptions.py``: the catalogue of documented wrong implementations with hints;
- ``strategies.py``: bounded, NaN-free hypothesis strategies for generated inputs;
- ``cases/<function>.json``: example inputs (the chapter's included); expected values always
  come from the reference solutions in ``source/``;
- ``test_graders.py``: the pytest front end (``pytest graders [--submission PATH]``).
"""

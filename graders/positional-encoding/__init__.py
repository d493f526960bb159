"""Hidden graders for the Positional Encoding assignment (trusted instructor code).

- ``checks_<notebook>.py``: checks per graded function (``NOTEBOOK`` names the notebook);
- ``misconceptions.py``: the catalogue of documented wrong implementations with hints;
- ``contracts.py``: each graded function's input domain, as the notebook's "Ketentuan yang dinilai"
  states it (the graders never call outside it: tests/test_contracts.py);
- ``alternatives.py``: correct implementations that must score 100% and careful code with one
  misconception that must be diagnosed (the self-validation of ``pe-course build``);
- ``strategies.py``: bounded, NaN-free hypothesis strategies for generated inputs;
- ``cases/<function>.json``: example inputs (the chapter's included); expected values always
  come from the reference solutions in ``source/``;
- the pytest front end is ``graders/test_graders.py`` (``pytest graders [--submission PATH]``).

Autograde and every ``pe-course`` command find this folder as ``graders/<assignment>/``
(``c.ScoreWithGraders.graders_dir``).
"""

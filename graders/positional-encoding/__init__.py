"""Hidden graders for the Positional Encoding assignment (trusted instructor code).

One folder per notebook, named as the notebook (``01_embedding/`` grades ``01_embedding.ipynb``), each
holding that notebook's graded functions' graders:

- ``checks*.py``: per function its classes of input (``graded``) and its checks (``@check``);
- ``strategies.py``: bounded, NaN-free hypothesis strategies for the generated inputs;
- ``contracts.py``: each function's input domain (``@domain``), as the notebook's "Ketentuan yang
  dinilai" states it (the graders never call outside it: tests/engine/test_contracts.py);
- ``misconceptions.py``: the catalogue of documented wrong implementations with hints (``@misconception``);
- ``alternatives.py`` and ``flawed.py``: the students of the self-validation (``pe-course build``):
  correct implementations (``@alternative``), careful code with one misconception (``@careful``) and
  flawed code that loses exactly the clauses named (``@flawed``);
- ``cases/<function>.json``: example inputs (the chapter's included); expected values always come
  from the reference solutions in ``source/``.

``_shared/`` holds what several notebooks use: ``properties.py`` (properties needing no reference;
shipped verbatim as the release's ``public_checks/properties.py``), the strategies' and the contract
domains' building blocks. The rule that finds all this: :mod:`pe_course.engine.discovery`; the pytest front end
is ``graders/test_graders.py`` (``pytest graders [--submission PATH]``).
"""

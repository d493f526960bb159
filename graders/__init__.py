"""The course's hidden graders: each assignment's suite in ``graders/<assignment>/``
(``c.ScoreWithGraders.graders_dir``), and their pytest front end here
(``pytest graders [--submission PATH]``, ``test_graders.py``)."""

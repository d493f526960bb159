"""Where a round's tasks run: two implementations of the interface the round owns
(:class:`pe_course.round.runner.Runner`); the command (:mod:`pe_course.cli.grading`) chooses one and
hands it to the round.

- :mod:`.local` — :class:`~.local.LocalRunner`, worker processes on this machine (``--jobs``);
- :mod:`.dask_cluster` — :class:`~.dask_cluster.DaskRunner`, the workers of a Dask distributed
  cluster (``--scheduler``), with :mod:`.dask_worker` (what runs on a worker) and :mod:`.bundle`
  (what travels to it).

The round itself — skip unchanged submissions, merge each result once, feedback, attention,
interruption — is written once, in :mod:`pe_course.round.grade`.

Runs in the instructor's process (the runner, which starts the workers) and in the workers it starts
(:mod:`.local`'s processes, :mod:`.dask_worker` on a Dask worker), which run ``pe_course.round.task``.
Imports ``round`` (the runner interface and the task), ``course``, ``sandbox`` and ``interruption`` (docs/architecture.md).
"""

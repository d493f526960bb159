"""Where a round's tasks run: one interface (:class:`~.base.Runner`), two implementations.

- :mod:`.local` — :class:`~.local.LocalRunner`, worker processes on this machine (``--jobs``);
- :mod:`.dask_cluster` — :class:`~.dask_cluster.DaskRunner`, the workers of a Dask distributed
  cluster (``--scheduler``), with :mod:`.dask_worker` (what runs on a worker) and :mod:`.bundle`
  (what travels to it).

The round itself — skip unchanged submissions, merge each result once, feedback, attention,
interruption — is written once, in :mod:`pe_course.grading_round`.

Runs in the instructor's process (the runner, which starts the workers) and in the workers it starts
(:mod:`.local`'s processes, :mod:`.dask_worker` on a Dask worker), which run ``pe_course.grading_task``.
Imports ``grading_task``, ``course``, ``sandbox`` and ``interruption`` (docs/architecture.md).
"""

"""``tfperf diagnose``: run a learner's own training for a few steps with the course's counters on, and name what
slows it, with the evidence and the chapter that fixes it.

Modules, bottom to top (each imports only those listed before it):

- ``findings``: the catalogue of findings (a stable code, what it means, the chapter and section that fix it) and
  :func:`findings.decide`, which turns the counts of a run into findings.
- ``run``: :func:`run.diagnose` (``train(steps)`` called with the counters on) and :func:`run.diagnose_script`
  (a script that defines ``train``), and the report as text or data.
- ``registry``: the run registry (``python -m tfperf runs``): every training run's device, data hash, hyperparameters,
  duration, throughput and final metrics, in SQLite or any database SQLAlchemy reaches.
- ``magic``: ``%%diagnose`` (``%load_ext tfperf.diagnosis.magic``): a notebook cell that is one training step, diagnosed.
"""

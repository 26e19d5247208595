"""``tfperf diagnose``: run a learner's own training for a few steps with the course's counters on, and name what
slows it, with the evidence and the chapter that fixes it.

Modules, bottom to top (each imports only those listed before it):

- ``findings``: the catalogue of findings (a stable code, what it means, the chapter and section that fix it) and
  :func:`findings.decide`, which turns the counts of a run into findings.
- ``run``: :func:`run.diagnose` (``train(steps)`` called with the counters on: a :class:`run.Measurement`), the unit
  costs that price each finding, and the report as text or data, ranked by what each cause costs.
- ``steps``: :class:`steps.StepClock`: what a training step is in a script as written (Keras's ``fit``, a tf.function
  that updates variables, an optimizer applied eagerly), found while it runs.
- ``script``: :func:`script.diagnose_script`: a script run unmodified as ``__main__``, measured over the steps found,
  and stopped; its problems said in one line.
- ``registry``: the run registry (``python -m tfperf runs``): every training run's device, data hash, hyperparameters,
  duration, throughput and final metrics, in SQLite or any database SQLAlchemy reaches.
- ``magic``: ``%%diagnose`` (``%load_ext tfperf.diagnosis.magic``): a notebook cell that is one training step, diagnosed.
"""

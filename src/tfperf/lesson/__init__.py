"""What a lesson shows the learner.

- ``source``: ``show(fn, ...)``: a library function's source, highlighted, next to what a notebook measures.
- ``plots``: ``Run`` (one run's settings and records), ``show(draw, runs)``, ``plot_lines`` (a group keeps
  its colour in every run), ``legend`` (groups and runs, not every line), ``plot_bars``, ``plot_grouped_barh``, ``each_run``.
- ``widgets``: ``ExperimentPanel``, the one reusable experiment panel.
- ``predictions``: predict, then measure: a committed prediction beside the measurement, and ``summary()``.
- ``workspace``: the learner's own copies of the notebooks in ``my-work/`` (never overwritten).
"""

"""Helper library of the course "TensorFlow performance on the GPU, learned by measuring it".

Subpackages by role, bottom to top: each imports only those listed before it, and the modules
inside a subpackage import only modules listed before them in that subpackage's docstring
(tests/unit/test_layers.py checks both). These lists are the one map of the library;
docs/contributing.md points here.

- ``runtime``: where the course runs: the checkout, TensorFlow's logs, the experiment size, the device.
- ``measure``: the instruments: the one clock, counters of host reads, traces, ops and patches,
  a pipeline's graph and timeline, device utilization.
- ``diagnosis``: ``python -m tfperf diagnose``: a learner's own training run with the counters on, and what slows it,
  named with its evidence and the chapter that fixes it; ``python -m tfperf runs``: the run registry.
- ``lesson``: what a lesson shows: library source next to a measurement, plots, the experiment panel,
  the learner's own copies of the notebooks.
- ``experiments``: one module of timing experiments per chapter (records in, plots out).
- ``grading``: the checks that the nbgrader tests and visible checks call, and the throughput targets.
- ``autograding``: nbgrader's side (for instructors): the sandboxed kernel, the preprocessors that keep
  honest work, the static screen of answers, and ``recheck``.
- ``classgrading``: ``python -m tfperf grade``: a whole class, resumable, in parallel or on Slurm.
- ``authoring``: for contributors: notebook normalization and release, the notebook lint, launch links,
  the device report.
- ``course``: ``start()``, what a notebook's setup cell calls.
- ``cli``: ``python -m tfperf doctor | ceilings | diagnose | runs | calibrate | workspace | report | recheck | grade``.

Widgets never import experiments: the notebook wires a panel to an experiment function.
Importing the package does not import TensorFlow.
"""

__version__ = "0.1.0"


def diagnose(train, *, steps: int = 20, warmup: int = 2, card="cached", profile_dir=None, profile_steps: int = 10):
    """``train(steps)`` run with the course's counters on, and what slows it (:func:`tfperf.diagnosis.run.diagnose`);
    with ``profile_dir``, ``profile_steps`` more steps under the TensorFlow Profiler, whose analysis decides
    ``input-bound``. Imports TensorFlow."""
    from tfperf.diagnosis.run import diagnose as run

    return run(train, steps=steps, warmup=warmup, card=card, profile_dir=profile_dir, profile_steps=profile_steps)

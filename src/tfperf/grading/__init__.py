"""The assertions that the course's nbgrader tests (and visible checks) call.

Every failure is a :class:`GradingFailure` whose message says what was measured, what
was expected, and which section of the notebook to reread. The learner's code runs
inside :func:`tfperf.runtime.logs.captured_stderr`, so its warnings and TensorFlow's log lines
cannot reach the test cell's stderr (which nbgrader would score as a failure).

Modules, bottom to top (each imports only those listed before it):

- ``remote``: the learner's function as the judge holds it (a handle whose calls the answer's process answers),
  and the values that cross between the two, as data.
- ``messages``: what the grading process, the judge and the answer's process send each other: JSON and ``.npy``,
  never pickles.
- ``specs``: a check's spec, read from a test cell's text: the calls of an assertion and their arguments, bound to
  the assertion's own signature.
- ``targets`` (+ ``targets.toml``): throughput targets per exercise and device class.
- ``calls``: runs learner code quietly; ``GradingFailure``.
- ``guard``: refuses to grade in a kernel whose grading, timing, counting or TensorFlow state,
  or whose given code (registered with :func:`given`), was changed.
- ``results``: what code returns.
- ``concepts``: concept checks (one letter per question; the right ones in hidden tests), graded by the grading
  process from the answer cell's text.
- ``classifiers``: probabilities, accuracy, a loss that matches the output.
- ``precision``: a Keras model made for mixed precision (compute dtypes, a float32 output, loss scaling).
- ``model_runs``: how often a model runs.
- ``pipelines``: tf.data pipelines.
- ``printing``: what code prints; the prints check kind (what a test cell asks, what the answer's process writes,
  read and decided by the grading process: :mod:`tfperf.autograding.check_kinds`).
- ``roofline``: a step placed on the roofline from a card's numbers (its regime and its floor).
- ``diagnoses``: a learner's diagnosis procedure on training scripts it has not seen, and a fixed script diagnosed (chapter 8).
- ``recorded_runs``: a training run recorded in the run registry, complete and true to the run.
- ``replicated``: a training run made correct under ``MirroredStrategy`` (chapter 7).
- ``speed_trial``: the one speed trial: two sides timed as interleaved pairs on new inputs, every result compared
  (the kernel's visible check and the grading process both run it), and one side's samples as the kernel and a
  grading worker both keep them.
- ``memory``: a training run whose memory stays flat over its epochs, read from outside the objects holding it.
- ``syncs``: host reads and uploads; reports made while a loop trains.
- ``tracing``: trace counts, and those read by the grading process around its timed calls.
- ``traffic``: bytes a step moves to and from memory; the bytes check kind, decided by the grading process.
- ``train_steps``: host reads inside a Keras training step; Keras untouched.
- ``speed``: speedups and steady epochs; the speed check kind, timed by the grading process (a test cell's prints
  and traces checks watch its timed calls).
"""

from tfperf.grading.calls import GradingFailure, NotWritten, call, not_written
from tfperf.grading.classifiers import (
    assert_accuracy_at_least,
    assert_loss_matches_output,
    assert_probabilities,
    predictions,
)
from tfperf.grading.diagnoses import check_diagnosis, check_fixed_script
from tfperf.grading.guard import given
from tfperf.grading.memory import assert_memory_flat
from tfperf.grading.model_runs import assert_model_runs
from tfperf.grading.pipelines import (
    assert_served,
    check_pipeline_stages,
    check_same_epochs,
    check_served_pipeline,
    dataset_from,
)
from tfperf.grading.precision import (
    assert_mixed_precision,
    assert_same_architecture,
    low_precision_pays,
    step_from_one_state,
)
from tfperf.grading.printing import assert_prints_at_most, assert_prints_each_call
from tfperf.grading.recorded_runs import check_recorded_run
from tfperf.grading.replicated import check_replicated_training
from tfperf.grading.results import assert_raises, check_function, check_reports, check_same_as, check_same_result
from tfperf.grading.roofline import check_placements
from tfperf.grading.speed import RECORD_ENV_VAR, assert_speedup, assert_steady_epochs, cores, enough_cores
from tfperf.grading.syncs import assert_host_syncs_at_most, assert_uploads_at_most
from tfperf.grading.tracing import assert_traces_at_most, tracing_count
from tfperf.grading.traffic import assert_moves_fewer_bytes
from tfperf.grading.train_steps import assert_keras_pristine, assert_no_host_reads_in_train_step

__all__ = [
    "GradingFailure",
    "NotWritten",
    "RECORD_ENV_VAR",
    "assert_accuracy_at_least",
    "assert_host_syncs_at_most",
    "assert_keras_pristine",
    "assert_loss_matches_output",
    "assert_memory_flat",
    "assert_mixed_precision",
    "assert_model_runs",
    "assert_moves_fewer_bytes",
    "assert_no_host_reads_in_train_step",
    "assert_prints_at_most",
    "assert_prints_each_call",
    "assert_probabilities",
    "assert_raises",
    "assert_same_architecture",
    "assert_speedup",
    "assert_steady_epochs",
    "assert_traces_at_most",
    "assert_uploads_at_most",
    "call",
    "check_diagnosis",
    "check_fixed_script",
    "check_function",
    "check_pipeline_stages",
    "check_placements",
    "check_recorded_run",
    "check_replicated_training",
    "check_reports",
    "check_same_as",
    "check_same_epochs",
    "check_served_pipeline",
    "assert_served",
    "check_same_result",
    "dataset_from",
    "given",
    "low_precision_pays",
    "cores",
    "enough_cores",
    "not_written",
    "predictions",
    "step_from_one_state",
    "tracing_count",
]

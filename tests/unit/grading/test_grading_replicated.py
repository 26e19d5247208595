"""grading.check_replicated_training (chapter 7, exercise 1): a custom loop made correct under MirroredStrategy,
and honest alternatives, pass; each classic mistake, and the one-device result reached by another path, fail with
what to fix. The answers run in a fresh process with 2 replicas (replicated_answers.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")

ANSWERS = Path(__file__).with_name("replicated_answers.py")
EXPECTED = {
    "reference": None,
    "eager_steps": None,
    "keras_fit": None,
    "keras_loss_reduced": None,  # Keras 3 scales a sum_over_batch_size loss by 1/replicas under a strategy
    "mean_per_replica": "average each replica's per-example loss over the global batch",
    "per_replica_batch": "each replica saw batches of [8] examples, not 16",
    "whole_batch_each": "each replica saw batches of [32] examples, not 16",
    "one_device_inside": "has one copy, not one per replica",
    "cross_replica": "raised ValueError",
    "copied_in": "computed the model's gradients [0, 0] times",
    "one_step_for_show": "computed the model's gradients [1, 1] times",
}


@pytest.fixture(scope="module")
def verdicts() -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(ANSWERS), *EXPECTED], capture_output=True, text=True, timeout=300, cwd=ANSWERS.parent
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if ": PASSED" in line or ": FAILED" in line]
    return dict(line.split(": ", 1) for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("answer", EXPECTED)
def test_each_answer_gets_its_verdict(verdicts, answer):
    expected = EXPECTED[answer]
    if expected is None:
        assert verdicts[answer] == "PASSED"
    else:
        assert verdicts[answer].startswith("FAILED") and expected in verdicts[answer], verdicts[answer]


def test_the_witness_notes_replica_and_batch_not_the_build():
    import keras
    import tensorflow as tf

    from tfperf.experiments import beyond_one_device as bod

    bod.forget_witnessed()
    model = keras.Sequential([keras.Input((bod.FEATURES,)), bod.ReplicaWitness(), keras.layers.Dense(2)])
    assert bod.witnessed() == []  # Keras inferring shapes is not a step
    model(tf.zeros((5, bod.FEATURES)))
    tf.function(model)(tf.zeros((3, bod.FEATURES)))
    assert bod.witnessed() == [(0, 5), (0, 3)]  # outside a strategy: the default replica, 0
    assert bod.replica_backward_passes(model) == [[0]]  # counted only on a strategy's replicas
    assert len(model.get_weights()) == 3  # the witness's scale, the kernel, the bias: the counter is not a weight
    bod.forget_witnessed()
    assert bod.witnessed() == []

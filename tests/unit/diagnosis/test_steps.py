"""What a training step is in a script as written (tfperf.diagnosis.steps.StepClock)."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
from tfperf.diagnosis.steps import StepClock  # noqa: E402


def record():
    events = []
    return events, StepClock(lambda count, what: events.append((count, what)))


def test_keras_fit_counts_the_steps_of_each_call_of_its_train_function():
    import keras

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse", steps_per_execution=4)
    events, clock = record()
    with clock.running():
        model.fit(np.ones((64, 4), "float32"), np.ones((64, 1), "float32"), batch_size=8, verbose=0)
    assert [n for n, _ in events] == [4, 4] and "Keras's train function in fit (4 step(s) a call)" in events[0][1]
    assert clock.inside_seconds > 0
    assert clock.keras_inputs == {"ArrayDataAdapter": 1}  # batches Keras sliced from the arrays


def test_fit_on_the_scripts_own_dataset_is_told_from_fit_on_arrays():
    import keras

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((64, 4), "float32"), np.ones((64, 1), "float32"))).batch(8)
    _, clock = record()
    with clock.running():
        model.fit(data, verbose=0)
    assert clock.keras_inputs == {"TFDatasetAdapter": 1}


def test_a_tf_function_that_updates_variables_is_a_step_one_that_does_not_is_not():
    w = tf.Variable(1.0)

    @tf.function
    def step():
        for _ in tf.range(3):  # the update in a loop's body
            w.assign_sub(0.1)

    @tf.function
    def evaluate():
        return w * 2.0

    events, clock = record()
    with clock.running():
        for _ in range(3):
            step()
            evaluate()
    assert [n for n, _ in events] == [1, 1, 1] and events[0][1].endswith(".step (its graph updates variables)")


def test_an_optimizer_applied_eagerly_is_a_step_and_the_first_source_wins():
    import keras

    w = tf.Variable([1.0])
    optimizer = keras.optimizers.SGD(0.1)
    events, clock = record()
    with clock.running():
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(w * w)
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        tf.function(lambda: w.assign_add([1.0]))()  # another source, after the first: not counted
    assert [n for n, _ in events] == [1, 1] and "eager call of SGD.apply_gradients" in events[0][1]
    assert clock.source == "eager optimizer"


def test_the_clock_counts_the_batches_the_scripts_loop_takes_from_each_iterator():
    """Batches taken in Python count; those a tf.function takes inside its graph do not."""
    import tensorflow as tf

    from tfperf.diagnosis.steps import StepClock

    feeding, other = iter(tf.data.Dataset.range(100)), iter(tf.data.Dataset.range(100))

    @tf.function
    def inside(iterator):
        return next(iterator) + next(iterator)

    with StepClock(lambda count, what: None).running() as clock:
        next(other)
        since = clock.batches_taken()
        for _ in range(5):
            next(feeding)
        next(other)
        inside(other)
        inside(other)
        busiest = clock.busiest_iterator(since)
    assert busiest is not None and busiest[0] is feeding and busiest[1] == 5
    assert clock.batches_taken()[id(other)] == 2

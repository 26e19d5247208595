"""Answers to chapter 7's exercise 1, run by test_grading_replicated.py in a fresh process (the replicas' devices
are made before TensorFlow starts): ``python replicated_answers.py NAME...`` prints ``NAME: PASSED`` or
``NAME: FAILED <message>`` for each answer, checked by ``grading.check_replicated_training`` on 2 replicas."""

import importlib
import sys
from pathlib import Path

import numpy as np

from tfperf.runtime import replicas

plan, names = replicas.configure(2)

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from tfperf import grading  # noqa: E402
from tfperf.experiments import beyond_one_device as bod  # noqa: E402

strategy = replicas.strategy(names)
WIDTH, RATE = 64, 0.1


def make_model(seed):
    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [
            keras.Input((bod.FEATURES,)),
            bod.ReplicaWitness(),
            keras.layers.Dense(WIDTH, activation="relu"),
            keras.layers.Dense(bod.CLASSES),
        ]
    )


def per_example_loss():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)


def train_one_device(x, y, *, seed, steps, batch):
    model, optimizer, loss_of = make_model(seed), keras.optimizers.SGD(RATE), per_example_loss()

    @tf.function
    def step(features, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(loss_of(labels, model(features, training=True)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    for features, labels in tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True).take(steps):
        step(features, labels)
    return model


def _replicated(strategy, x, y, *, seed, steps, batch, loss_over, in_function=True, split=True):
    """A custom loop under the strategy: ``batch`` examples a step, each replica's loss divided by ``loss_over``."""
    with strategy.scope():
        model, optimizer = make_model(seed), keras.optimizers.SGD(RATE)
    loss_of = per_example_loss()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True)
    if split:
        dataset = strategy.experimental_distribute_dataset(dataset)

    def step(features, labels):
        with tf.GradientTape() as tape:
            per_example = loss_of(labels, model(features, training=True))
            loss = tf.reduce_sum(per_example) / loss_over if loss_over else tf.reduce_mean(per_example)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    def distributed_step(features, labels):
        strategy.run(step, args=(features, labels))

    run = tf.function(distributed_step) if in_function else distributed_step
    for i, (features, labels) in enumerate(dataset):
        if i == steps:
            break
        run(features, labels)
    return model


def reference(strategy, x, y, *, seed, steps, per_replica):
    batch = per_replica * strategy.num_replicas_in_sync
    return _replicated(strategy, x, y, seed=seed, steps=steps, batch=batch, loss_over=batch)


def eager_steps(strategy, x, y, *, seed, steps, per_replica):  # honest: strategy.run without a tf.function
    batch = per_replica * strategy.num_replicas_in_sync
    return _replicated(strategy, x, y, seed=seed, steps=steps, batch=batch, loss_over=batch, in_function=False)


def keras_fit(strategy, x, y, *, seed, steps, per_replica):  # honest: fit distributes the dataset itself
    batch = per_replica * strategy.num_replicas_in_sync
    with strategy.scope():
        model = make_model(seed)
        model.compile(keras.optimizers.SGD(RATE), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x[: batch * steps], y[: batch * steps], batch_size=batch, epochs=1, shuffle=False, verbose=0)
    return model


def keras_loss_reduced(strategy, x, y, *, seed, steps, per_replica):
    """Honest: a Keras loss with its default reduction, which under a strategy already divides by the replicas."""
    batch = per_replica * strategy.num_replicas_in_sync
    with strategy.scope():
        model, optimizer = make_model(seed), keras.optimizers.SGD(RATE)
        loss_of = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    dataset = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True)
    )

    def step(features, labels):
        with tf.GradientTape() as tape:
            loss = loss_of(labels, model(features, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    @tf.function
    def distributed_step(features, labels):
        strategy.run(step, args=(features, labels))

    for i, (features, labels) in enumerate(dataset):
        if i == steps:
            break
        distributed_step(features, labels)
    return model


def mean_per_replica(strategy, x, y, *, seed, steps, per_replica):  # each replica's loss over its own batch
    batch = per_replica * strategy.num_replicas_in_sync
    return _replicated(strategy, x, y, seed=seed, steps=steps, batch=batch, loss_over=None)


def per_replica_batch(strategy, x, y, *, seed, steps, per_replica):  # the dataset batched by the per-replica size
    return _replicated(strategy, x, y, seed=seed, steps=steps, batch=per_replica, loss_over=per_replica)


def whole_batch_each(strategy, x, y, *, seed, steps, per_replica):  # not split: every replica gets the global batch
    batch = per_replica * strategy.num_replicas_in_sync
    return _replicated(strategy, x, y, seed=seed, steps=steps, batch=batch, loss_over=batch, split=False)


def one_device_inside(strategy, x, y, *, seed, steps, per_replica):  # the value reached by another path
    return train_one_device(x, y, seed=seed, steps=steps, batch=per_replica * strategy.num_replicas_in_sync)


def cross_replica(strategy, x, y, *, seed, steps, per_replica):  # trained in the scope, never on the replicas
    batch = per_replica * strategy.num_replicas_in_sync
    with strategy.scope():
        model, optimizer, loss_of = make_model(seed), keras.optimizers.SGD(RATE), per_example_loss()
        for features, labels in tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).take(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(loss_of(labels, model(features, training=True)))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return model


def _red_team_answer(name):
    """The round trip's red-team answer ``name`` (a submitted cell, in the notebook's names), run here on this file's
    model: one source for the attack, graded by the check alone here and through nbgrader there."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for tests.grading
    red_team = importlib.import_module("tests.grading.red_team.07_beyond_one_device").RED_TEAM
    namespace = dict(globals(), make_classifier=make_model, np=np)  # np: as the notebook binds it
    exec(next(case for case in red_team if case.name == name).edits["replicated"], namespace)
    return namespace["train_replicated"]


# Another path: the same layers without the witness trained on one device, their weights copied into a model made in
# the scope, and one forward step on the replicas for the witness to see.
copied_in = _red_team_answer("red3_trained_elsewhere_copied_in")


def one_step_for_show(strategy, x, y, *, seed, steps, per_replica):
    """The copy-in above after one real step on the replicas (with a learning rate of 0) instead of a forward pass."""
    model = copied_in(strategy, x, y, seed=seed, steps=steps, per_replica=per_replica)
    batch = per_replica * strategy.num_replicas_in_sync
    with strategy.scope():
        optimizer = keras.optimizers.SGD(0.0)
    loss_of = per_example_loss()
    features, labels = next(
        iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)))
    )

    def step(features, labels):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_of(labels, model(features, training=True)), global_batch_size=batch)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    tf.function(lambda f, lab: strategy.run(step, args=(f, lab)))(features, labels)
    return model


grading.given(make_model, train_one_device)
for name in sys.argv[1:]:
    try:
        grading.check_replicated_training(
            globals()[name], train_one_device, strategy=strategy, per_replica=16, steps=6, seeds=(1, 2)
        )
        print(f"{name}: PASSED", flush=True)
    except grading.GradingFailure as err:
        print(f"{name}: FAILED {' '.join(str(err).split())}", flush=True)

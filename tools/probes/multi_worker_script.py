"""One worker of a MultiWorkerMirroredStrategy cluster (run by tools/probes/chapter7_multiworker_probe.py through
tfperf.runtime.cluster.run_workers): a custom training loop that prints its step every 200 steps, or with the
argument "fit", Keras's Model.fit on the same model (which Keras 3.15 does not run under this strategy).
A line "worker I raised ..." says how it ended when it did not end by itself."""

import json
import os
import sys
import time

import keras
import tensorflow as tf

index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
start = time.time()
timeout = 0
use_fit = "fit" in sys.argv[1:]
options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout) if timeout else None
strategy = (
    tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if options
    else tf.distribute.MultiWorkerMirroredStrategy()
)
print("worker", index, "replicas", strategy.num_replicas_in_sync, "ready at", round(time.time() - start, 1), flush=True)
with strategy.scope():
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(4)])
    optimizer = keras.optimizers.SGD(0.01)
loss_of = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
GLOBAL = 128
ds = (
    tf.data.Dataset.range(10**9)
    .map(lambda i: (tf.random.stateless_normal((32,), [i, i]), tf.cast(i % 4, tf.int32)))
    .batch(GLOBAL)
)
dist = iter(strategy.experimental_distribute_dataset(ds))


def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(loss_of(y, model(x, training=True)), global_batch_size=GLOBAL)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


@tf.function
def train(batch):
    return strategy.reduce("SUM", strategy.run(step, args=batch), axis=None)


try:
    if use_fit:
        with strategy.scope():
            model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(ds, epochs=1, steps_per_epoch=1000, verbose=0)
        print("worker", index, "fit ended at", round(time.time() - start, 1), flush=True)
        sys.exit(0)
    for n in range(10**9):
        loss = train(next(dist))
        if n % 200 == 0:
            print(
                "worker",
                index,
                "step",
                n,
                "loss",
                round(float(loss), 3),
                "at",
                round(time.time() - start, 1),
                flush=True,
            )
except Exception as err:
    print(
        "worker",
        index,
        "raised",
        type(err).__name__,
        " ".join(str(err).split())[:400],
        "at",
        round(time.time() - start, 1),
        flush=True,
    )
    sys.exit(3)

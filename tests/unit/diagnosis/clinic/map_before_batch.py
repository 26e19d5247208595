"""A cheap transform mapped over single records, then batched: per-record overhead paid for every record.

Reported: Stack Overflow 50781373, "Using feed_dict is more than 5x faster than using dataset API?" (Cao et al.
2022: root cause "API: inefficient API usage": map before batch).
Expected: input-bound
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
x = rng.normal(size=(1 << 16, 8)).astype("float32")
y = rng.normal(size=(1 << 16, 1)).astype("float32")


def scale(features, target):
    return (features - 0.5) * 2.0, target


dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(scale).batch(1024).repeat()
options = tf.data.Options()
options.autotune.enabled = False
dataset = dataset.with_options(options)
w = tf.Variable(tf.zeros([8, 1]))


@tf.function
def train_step(features, target):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((features @ w - target) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


for features, target in dataset.take(400):
    train_step(features, target)

"""Sequences padded to each batch's own longest length: every new length is a new input shape, and a new trace.

Reported: Stack Overflow 57672444, "Calling tf.session.run gets slower" (Cao et al. 2022: root cause
"Model: confusion with computation model", symptom "Time: increasing time over time"); in TF 2 the graph that grows
is the function's cache of traces.
Expected: retracing
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
embedding = tf.Variable(tf.random.normal([100, 16], seed=1))
dense = tf.Variable(tf.random.normal([16, 1], seed=2))


@tf.function
def train_step(tokens, target):
    with tf.GradientTape() as tape:
        pooled = tf.reduce_mean(tf.gather(embedding, tokens), axis=1)
        loss = tf.reduce_mean((pooled @ dense - target) ** 2)
    grads = tape.gradient(loss, [embedding, dense])
    embedding.assign_sub(0.1 * tf.convert_to_tensor(grads[0]))
    dense.assign_sub(0.1 * grads[1])
    return loss


for _step in range(300):
    length = int(rng.integers(5, 200))  # the batch's longest sequence
    tokens = tf.constant(rng.integers(0, 100, size=(32, length)))
    train_step(tokens, tf.constant(rng.normal(size=(32, 1)), tf.float32))

"""Clean: Keras fit on a tf.data pipeline that batches first, maps in parallel, caches and prefetches.

Expected: none
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(12)
images = rng.random((8192, 64)).astype("float32")
labels = rng.integers(0, 10, size=8192)


def normalize(batch, label):
    return (batch - tf.reduce_mean(batch, axis=1, keepdims=True)) * 4.0, label


dataset = (
    tf.data.Dataset.from_tensor_slices((images, labels))
    .batch(256)
    .map(normalize, num_parallel_calls=tf.data.AUTOTUNE)
    .cache()
    .repeat()
    .prefetch(tf.data.AUTOTUNE)
)
model = tf.keras.Sequential(
    [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(10)]
)
model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=8)
model.fit(dataset, steps_per_epoch=64, epochs=4, verbose=0)

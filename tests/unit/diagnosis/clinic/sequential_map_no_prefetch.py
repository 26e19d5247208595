"""A tf.data pipeline whose costly per-record map runs on one thread, with nothing prepared ahead of the step.

Reported: Stack Overflow 48068013, "How to speed up batch preparation when using Estimators API combined with
tf.data.Dataset" (Cao et al. 2022: root cause "API: inefficient API usage": num_parallel_calls; and "Data:
inefficient data transmission": prefetch).
Expected: input-bound
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
images = rng.random((2048, 32, 32)).astype("float32")
labels = rng.integers(0, 10, size=2048)


def preprocess(image, label):
    for _ in range(40):  # a costly per-record transform (filters, color jitter, ...)
        image = tf.sqrt(image * image + 1.0) - 0.5
    return tf.reshape(image, [-1]), label


dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(preprocess).batch(32).repeat()
options = tf.data.Options()
options.autotune.enabled = False  # nothing tuned or added behind the script's back
dataset = dataset.with_options(options)
model = tf.keras.Sequential(
    [tf.keras.Input((1024,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(10)]
)
model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=8)
model.fit(dataset, steps_per_epoch=64, epochs=5, verbose=0)

"""Records read one at a time from a slow source through Dataset.from_generator, with no parallel reads.

Reported: Stack Overflow 58785715, "Training GAN in keras with .fit_generator()" (Cao et al. 2022: root cause
"API: not using efficient API", symptom "Time: slow execution time").
Expected: input-bound
"""

import time

import numpy as np
import tensorflow as tf


def records():
    rng = np.random.default_rng(0)
    while True:
        time.sleep(0.002)  # one record from a slow disk or a network store
        yield rng.normal(size=(32,)).astype("float32"), np.float32(rng.normal())


signature = (tf.TensorSpec([32], tf.float32), tf.TensorSpec([], tf.float32))
dataset = tf.data.Dataset.from_generator(records, output_signature=signature).batch(16)
model = tf.keras.Sequential([tf.keras.Input((32,)), tf.keras.layers.Dense(16), tf.keras.layers.Dense(1)])
model.compile("sgd", "mse", steps_per_execution=4)
model.fit(dataset, steps_per_epoch=100, epochs=3, verbose=0)

"""NumPy batches sliced and converted to tensors in every step: on a GPU, a copy to the device every step.

Reported: Stack Overflow 63744946, "Training with GPU very slow" (Cao et al. 2022: root cause
"Data: inefficient data transmission", symptom "Time: slow execution time").
Expected: per-batch-upload
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
features = rng.normal(size=(16384, 1024)).astype("float32")
targets = rng.normal(size=(16384, 8)).astype("float32")
w = tf.Variable(tf.zeros([1024, 8]))
optimizer = tf.keras.optimizers.SGD(0.01)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((xb @ w - yb) ** 2)
    optimizer.apply_gradients([(tape.gradient(loss, w), w)])
    return loss


for _epoch in range(5):
    for i in range(0, 16384, 2048):
        train_step(tf.convert_to_tensor(features[i : i + 2048]), tf.convert_to_tensor(targets[i : i + 2048]))

"""Augmentation written in NumPy and called from the pipeline through tf.py_function, one record at a time.

Reported: Stack Overflow 50798871, "How to use another library in the tensorflow graph?" (Cao et al. 2022: root cause
"API: not using efficient API": map_fn with py_func).
Expected: input-bound
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
images = rng.random((1024, 16, 16)).astype("float32")
labels = rng.integers(0, 4, size=1024)


def augment_numpy(image):
    image = image.numpy()
    for _ in range(30):
        image = np.rot90(np.flip(image, axis=0)) * 0.99 + 0.01
    return image.reshape(-1).astype("float32")


def augment(image, label):
    flat = tf.py_function(augment_numpy, [image], tf.float32)
    flat.set_shape([256])
    return flat, label


dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(augment).batch(16).repeat()
model = tf.keras.Sequential(
    [tf.keras.Input((256,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(4)]
)
model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=8)
model.fit(dataset, steps_per_epoch=32, epochs=5, verbose=0)

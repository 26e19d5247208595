"""fit on a small model with the default steps_per_execution=1: after every step Keras reads the logs on the host and
runs the callbacks, which a step this short cannot hide.

Reported: Stack Overflow 54634884, "Extremely slow training speed with Keras when using steps_per_epoch argument"
(Cao et al. 2022: root cause "Model: improper hyper parameter").
Expected: one-step-per-call
"""

import keras
import numpy as np

rng = np.random.default_rng(6)
x = rng.normal(size=(16384, 16)).astype("float32")
y = rng.integers(0, 2, size=16384)
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=64, epochs=3, verbose=0)

"""A new model built and trained for every round of a search, without keras.backend.clear_session(): every model's
train function is traced anew, and every old model stays in memory.

Reported: Stack Overflow 61068208, "How to avoid excessive memory usage while training multiple models in Tensorflow"
(Cao et al. 2022: root cause "API: inefficient API usage", symptom "Memory: memory leak"), and 63033923, "GPU memory
leakage when I load Keras models multi times".
Expected: retracing memory-growth one-step-per-call
"""

import keras
import numpy as np

rng = np.random.default_rng(7)
x = rng.normal(size=(256, 16)).astype("float32")
y = rng.normal(size=(256, 1)).astype("float32")
for width in [8, 16, 32, 64, 128] * 20:
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(width, activation="relu"), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)

"""fit with batch_size=1: every step is one sample, so the fixed cost of a step is paid for every sample.

Reported: Stack Overflow 55409283, "looping program for MLP Keras prediction" (Cao et al. 2022: root cause "API: not
using batch API"), and 54634884, "Extremely slow training speed with Keras when using steps_per_epoch argument"
("Model: improper hyper parameter").
Expected: small-batch one-step-per-call
"""

import keras
import numpy as np

rng = np.random.default_rng(5)
x = rng.normal(size=(2000, 16)).astype("float32")
y = rng.normal(size=(2000, 1)).astype("float32")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(x, y, batch_size=1, epochs=2, verbose=0)

"""Clean: Keras fit on arrays, a batch of 256, 16 steps a call of its train function.

Expected: none
"""

import keras
import numpy as np

rng = np.random.default_rng(11)
x = rng.normal(size=(32768, 32)).astype("float32")
y = rng.integers(0, 4, size=32768)
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(4)])
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=16)
model.fit(x, y, batch_size=256, epochs=3, verbose=0)

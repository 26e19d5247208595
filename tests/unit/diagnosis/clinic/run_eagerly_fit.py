"""Keras's fit compiled with run_eagerly=True (left on after debugging): the train step runs op by op.

Reported: Stack Overflow 54428570, "Tensorflow: 7x slower in eager mode" (Cao et al. 2022: root cause
"Model: confusion with computation model", symptom "Time: slow execution time").
Expected: eager-steps
"""

import keras
import numpy as np

rng = np.random.default_rng(1)
x = rng.normal(size=(4096, 32)).astype("float32")
y = rng.integers(0, 4, size=4096)
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(4)])
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), run_eagerly=True)
model.fit(x, y, batch_size=64, epochs=3, verbose=0)

"""A keras.utils.PyDataset (the Sequence of Keras 3) whose batches are built in Python, one record at a time.

Reported: Stack Overflow 57376654, "Keras DataGenerator using the keras Sequence" (Cao et al. 2022: root cause
"API: inefficient API usage", symptom "Time: slow execution time").
Expected: input-bound
"""

import time

import keras
import numpy as np


class Records(keras.utils.PyDataset):
    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return 200

    def __getitem__(self, index):
        rows = []
        for _ in range(32):
            time.sleep(0.0005)  # decode one record
            rows.append(self.rng.normal(size=(16,)))
        return np.array(rows, "float32"), np.zeros((32, 1), "float32")


model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile("sgd", "mse", steps_per_execution=4)
model.fit(Records(), epochs=2, verbose=0)

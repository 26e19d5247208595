"""A deterministic, costly preprocessing (a normalization that is the same every epoch) done again every epoch.

Reported: Stack Overflow 62522643, "Applying map on tensorflow Dataset performs very slowly" (Cao et al. 2022: root
cause "Data: inefficient data transmission").
Expected: input-bound
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(4)
signals = rng.normal(size=(1024, 512)).astype("float32")
targets = rng.normal(size=(1024, 1)).astype("float32")


def spectrum(signal, target):
    for _ in range(48):  # the same result every epoch: worth computing once
        signal = tf.math.log1p(tf.abs(tf.signal.rfft(signal)[:256]) + tf.abs(tf.signal.rfft(signal)[256:]))
        signal = tf.concat([signal, signal], axis=0)
    return signal[:64], target


dataset = tf.data.Dataset.from_tensor_slices((signals, targets)).map(spectrum).batch(32).repeat()
model = tf.keras.Sequential(
    [tf.keras.Input((64,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)]
)
model.compile("adam", "mse", steps_per_execution=8)
model.fit(dataset, steps_per_epoch=32, epochs=5, verbose=0)

"""A custom training loop with GradientTape, and no tf.function: every op dispatched from Python, every step.

Reported: Stack Overflow 54428570, "Tensorflow: 7x slower in eager mode" (Cao et al. 2022: root cause
"Model: confusion with computation model", symptom "Time: slow execution time").
Expected: eager-steps
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = tf.constant(rng.normal(size=(2048, 32)), tf.float32)
y = tf.constant(rng.integers(0, 4, size=2048))
model = tf.keras.Sequential(
    [tf.keras.Input((32,)), tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(4)]
)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)

for _epoch in range(5):
    for i in range(0, 2048, 64):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[i : i + 64], model(x[i : i + 64]))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

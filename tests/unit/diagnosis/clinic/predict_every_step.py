"""model.predict on the validation set after every training step, to watch the accuracy: predict builds its own
pipeline and loop on every call, far more work than the step.

Reported: Stack Overflow 66441843, "Keras model.predict() taking unreasonable amount of time" (Cao et al. 2022: root
cause "API: inefficient API usage", symptom "Time: slow execution time").
Expected: (outside the catalogue)
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(8)
x = rng.normal(size=(4096, 16)).astype("float32")
y = rng.integers(0, 2, size=4096)
x_val = rng.normal(size=(512, 16)).astype("float32")
model = tf.keras.Sequential(
    [tf.keras.Input((16,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2)]
)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat().prefetch(2)
for xb, yb in dataset.take(300):
    train_step(xb, yb)
    val_classes = model.predict(x_val, verbose=0).argmax(axis=1)

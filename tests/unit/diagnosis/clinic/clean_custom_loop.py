"""Clean: a compiled train step fed by a prefetching tf.data pipeline of whole batches (sliced, then shuffled: no
per-row work), the loss read once every 100 steps.

Expected: none
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(10)
x = rng.normal(size=(32768, 32)).astype("float32")
y = rng.integers(0, 4, size=32768)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(1024).shuffle(32, seed=1).repeat().prefetch(tf.data.AUTOTUNE)
model = tf.keras.Sequential(
    [tf.keras.Input((32,)), tf.keras.layers.Dense(1024, activation="relu"), tf.keras.layers.Dense(4)]
)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for step, (xb, yb) in enumerate(dataset.take(600)):
    loss = train_step(xb, yb)
    if step % 100 == 0:
        print(f"step {step}: loss {float(loss):.4f}")

"""Clean: a train step compiled by XLA (jit_compile=True), fed tensors already in memory.

Expected: none
"""

import tensorflow as tf

model = tf.keras.Sequential(
    [tf.keras.Input((256,)), tf.keras.layers.Dense(1024, activation="relu"), tf.keras.layers.Dense(1)]
)
optimizer = tf.keras.optimizers.SGD(0.01)
x, y = tf.random.normal([2048, 256], seed=4), tf.random.normal([2048, 1], seed=5)


@tf.function(jit_compile=True)
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for _step in range(400):
    train_step()

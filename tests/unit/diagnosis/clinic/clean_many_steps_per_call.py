"""Clean: 20 train steps inside one tf.function call (a tf.range loop), the loss read once a call.

Expected: none
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([128, 1], seed=1))
xs, ys = tf.random.normal([20, 512, 128], seed=2), tf.random.normal([20, 512, 1], seed=3)


@tf.function
def train_steps():
    loss = tf.constant(0.0)
    for i in tf.range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((xs[i] @ w - ys[i]) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


for _call in range(100):
    last = float(train_steps())

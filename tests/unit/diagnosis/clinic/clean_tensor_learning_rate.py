"""Clean: a learning rate that decays every step, kept in a tf.Variable the compiled step reads: one trace.

Expected: none
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([1024, 8], seed=1))
x, y = tf.random.normal([4096, 1024], seed=2), tf.random.normal([4096, 8], seed=3)
learning_rate = tf.Variable(0.05)


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    w.assign_sub(learning_rate * tape.gradient(loss, w))
    learning_rate.assign(learning_rate * 0.995)
    return loss


for _step in range(400):
    train_step()

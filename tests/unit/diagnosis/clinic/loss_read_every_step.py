"""The loss read on the host after every step, to log it: a sync point in every step.

Reported: Stack Overflow 62770704, "Does the raw Python 'for' loop reduce training performance of TensorFlow"
(Cao et al. 2022: root cause "Data: inefficient data preprocessing"); the read-every-step incident is the course's
chapter 5.
Expected: host-read-every-step
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([1024, 8], seed=1))
x, y = tf.random.normal([4096, 1024], seed=2), tf.random.normal([4096, 8], seed=3)


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


history = []
for _step in range(300):
    history.append(float(train_step()))

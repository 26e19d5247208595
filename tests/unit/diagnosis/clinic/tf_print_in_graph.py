"""tf.print inside the compiled train step, to watch the loss: the step writes a line every time it runs.

Reported: the course's chapter 5 (print, tf.print, and what printing costs); Cao et al. 2022 label logging in a step
under "API: inefficient API usage".
Expected: print-in-step
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([1024, 8], seed=1))
x, y = tf.random.normal([4096, 1024], seed=2), tf.random.normal([4096, 8], seed=3)


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    tf.print("loss", loss)
    return loss


for _step in range(300):
    train_step()
